"""Braip postback: JSON POST, amounts in cents, tracking nested in `meta`, the shared key
`basic_authentication` in the body.

No official document describes it; independent public receivers agree on the layout (confidence
medium-high). The status is keyed on `trans_status_code` where the code is one the preset knows,
else on the `trans_status` text. An abandoned checkout (`ABANDONO`) is never a sale.

The sample delivery is that JSON body, in cents, with the click id in `meta.src`.
"""

from __future__ import annotations

from typing import Any

from trilha.conversions.status import Status
from trilha.money import ValueUnit
from trilha.postbacks.payload import Tree
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule
from trilha.postbacks.sample import (
    BUYER,
    PRODUCT,
    Sale,
    Sample,
    SampleRequest,
    by_status,
    cents,
    json_request,
    local_time,
    net,
)

# trans_status_code: 1 and 2 agree across receivers; 3 and 4 come from one of them.
STATUS_CODES = {
    "1": Status.PENDING,
    "2": Status.APPROVED,
    "3": Status.DECLINED,
    "4": Status.CHARGEBACK,
}
STATUS_TEXTS = {
    "Pagamento Aprovado": Status.APPROVED,
    "Aguardando Pagamento": Status.PENDING,
    "Em Análise": Status.PENDING,
    "Em Processamento": Status.PENDING,
    "Pagamento Atrasado": Status.PENDING,
    "Parcialmente Pago": Status.PENDING,
    "Cancelada": Status.DECLINED,
    "Devolvida": Status.REFUNDED,
    "Estorno Pendente": Status.APPROVED,
    "Chargeback": Status.CHARGEBACK,
}
STATUS_FIELD = "trans_status_key"  # where key_status puts what the rules read


def key_status(payload: Tree) -> Tree:
    """Put the status the rules read in STATUS_FIELD: the code when the preset knows it, else
    the text (a code past 4 has no confirmed meaning, its text has)."""
    code = str(payload.get("trans_status_code") or "").strip()
    key = code if code in STATUS_CODES else payload.get("trans_status")
    return {**payload, STATUS_FIELD: key}


PRESET = Preset(
    name="braip",
    label="Braip",
    paths={
        "click_id": ("meta.src", "meta.sck", "src", "sck"),
        "event": ("type",),
        "status": (STATUS_FIELD,),
        "value": ("trans_value", "trans_total_value"),
        "net_value": ("commissions.0.value",),
        "currency": (),
        "txid": ("trans_key",),
        "occurred_at": ("trans_updatedate",),
        "secret": ("basic_authentication",),
    },
    rules=(
        Rule("LEAD", IGNORE, when_event="ABANDONO"),  # an abandoned checkout: not a sale
        Rule("SALE", IGNORE, when_event="ASSINATURA_ALTERADA"),  # the subscription, not a payment
        *(Rule("SALE", status, when_status=code) for code, status in STATUS_CODES.items()),
        *(Rule("SALE", status, when_status=text) for text, status in STATUS_TEXTS.items()),
        Rule("SALE", IGNORE),
    ),
    value_unit=ValueUnit.CENTS,
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    reshape=key_status,
    setup="Braip → Ferramentas → Postback: URL …/pb/braip?token=WORKSPACE_TOKEN. Copy the "
    "'basic_authentication' key into the merchant's secret; send the click id as ?src= on the "
    "checkout.",
    secret_names=("basic_authentication",),
)


# type, trans_status_code: Braip names every change STATUS_ALTERADO and tells it by the status.
WORDS = {
    Status.APPROVED: ("STATUS_ALTERADO", "2"),
    Status.PENDING: ("STATUS_ALTERADO", "1"),
    Status.DECLINED: ("STATUS_ALTERADO", "3"),
    Status.REFUNDED: ("STATUS_ALTERADO", "Devolvida"),
    Status.CHARGEBACK: ("STATUS_ALTERADO", "4"),
}
CODE_TEXTS = {
    "1": "Aguardando Pagamento",
    "2": "Pagamento Aprovado",
    "3": "Cancelada",
    "4": "Chargeback",
}


def build(sale: Sale) -> SampleRequest:
    status = sale.status or ""
    code, text = (status, CODE_TEXTS[status]) if status in CODE_TEXTS else ("", status)
    value = cents(sale.value)
    body: dict[str, Any] = {
        "basic_authentication": sale.secret,
        "type": sale.event,
        "trans_key": sale.txid,
        "trans_status": text,
        "trans_status_code": int(code) if code else None,
        "trans_value": value,
        "trans_total_value": value,
        "trans_payment": 2,  # card
        "trans_createdate": local_time(sale.sent_at),
        "trans_updatedate": local_time(sale.sent_at),
        "product_key": "pro0test",
        "product_name": PRODUCT,
        "plan_key": "pla0test",
        "plan_name": PRODUCT,
        "plan_amount": 1,
        "client_name": BUYER["name"],
        "client_email": BUYER["email"],
        "commissions": [{"type": "Produtor", "value": cents(net(sale.value))}],
        "meta": {"src": sale.click_id, "sck": None, "utm_source": None},
    }
    return json_request(body)


SAMPLE = Sample(by_status(WORDS), build)
