"""Braip postback (field names unverified: check one real delivery and adjust the paths).

The sample delivery is a form of trans_* fields, unverified like the preset.
"""

from __future__ import annotations

from trilha.conversions.status import Status
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule
from trilha.postbacks.sample import (
    BUYER,
    PRODUCT,
    Sale,
    Sample,
    SampleRequest,
    by_status,
    form_request,
    local_time,
)

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

PRESET = Preset(
    name="braip",
    label="Braip",
    paths={
        "click_id": ("src", "trans_src", "utm_content", "sck"),
        "event": ("type",),
        "status": ("trans_status",),
        "value": ("trans_value", "trans_total_value"),
        "net_value": ("commissions.value",),
        "currency": (),
        "txid": ("trans_key",),
        "secret": ("basic_authentication",),
    },
    rules=(
        *(Rule("SALE", status, when_status=text) for text, status in STATUS_TEXTS.items()),
        Rule("SALE", IGNORE),
    ),
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    setup="Braip → Ferramentas → Postback: URL …/pb/braip?token=WORKSPACE_TOKEN. Copy the "
    "'basic_authentication' key into the merchant's secret.",
    secret_names=("basic_authentication",),
)


# type and trans_status: Braip names every change STATUS_ALTERADO and tells it by the status text.
WORDS = {
    Status.APPROVED: ("STATUS_ALTERADO", "Pagamento Aprovado"),
    Status.PENDING: ("STATUS_ALTERADO", "Aguardando Pagamento"),
    Status.DECLINED: ("STATUS_ALTERADO", "Cancelada"),
    Status.REFUNDED: ("STATUS_ALTERADO", "Devolvida"),
    Status.CHARGEBACK: ("STATUS_ALTERADO", "Chargeback"),
}


def build(sale: Sale) -> SampleRequest:
    return form_request(
        {
            "basic_authentication": sale.secret,
            "type": sale.event,
            "trans_key": sale.txid,
            "trans_status": sale.status,
            "trans_value": f"{sale.value:.2f}",
            "trans_createdate": local_time(sale.sent_at),
            "prod_name": PRODUCT,
            "cli_name": BUYER["name"],
            "cli_email": BUYER["email"],
            "src": sale.click_id,
        }
    )


SAMPLE = Sample(by_status(WORDS), build)
