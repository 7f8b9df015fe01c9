"""Monetizze postback: form POST with bracket keys, the whole postback also as JSON in `json`.

The sample delivery is a form with bracket keys, and the same postback as JSON in `json`.
"""

from __future__ import annotations

import json
from typing import Any

from trilha.conversions.status import Status
from trilha.postbacks.payload import PayloadError, Tree, parse_json
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
    net,
)


def prefer_json_copy(payload: Tree) -> Tree:
    """Read the `json` field when present: it holds the same postback, already nested."""
    copy = payload.get("json")
    if not isinstance(copy, str):
        return payload
    try:
        nested = parse_json(copy)
    except (PayloadError, json.JSONDecodeError):
        return payload
    return {**payload, **nested}


STATUS_CODES = {
    "1": Status.PENDING,
    "2": Status.APPROVED,
    "3": Status.DECLINED,
    "4": Status.REFUNDED,
    "5": Status.CHARGEBACK,
    "6": Status.APPROVED,
}
# 7 abandoned checkout, 8 hidden, 98/99 card/boleto chosen, 101-104 subscription notices. They
# carry the sale's venda[status] too, so they must be ignored by code before the status text is
# read: otherwise a 104 "Aguardando pagamento" opened a pending sale of its own.
IGNORED_CODES = ("7", "8", "98", "99", "101", "102", "103", "104")
STATUS_TEXTS = {
    "Aguardando pagamento": Status.PENDING,
    "Finalizada": Status.APPROVED,
    "Cancelada": Status.DECLINED,
    "Devolvida": Status.REFUNDED,
    "Bloqueada": Status.CHARGEBACK,
    "Completa": Status.APPROVED,
}

PRESET = Preset(
    name="monetizze",
    label="Monetizze",
    paths={
        "click_id": ("venda.src",),
        "event": ("tipoEvento.codigo", "venda.codigo_status"),
        "status": ("venda.status",),
        "value": ("venda.valor",),
        "net_value": ("venda.valorRecebido",),
        "currency": (),
        "txid": ("venda.codigo",),
        "secret": ("chave_unica",),
    },
    rules=(
        *(Rule("SALE", status, when_event=code) for code, status in STATUS_CODES.items()),
        *(Rule("SALE", IGNORE, when_event=code) for code in IGNORED_CODES),
        *(Rule("SALE", status, when_status=text) for text, status in STATUS_TEXTS.items()),
        Rule("SALE", IGNORE),  # anything else: logged, never counted
    ),
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    reshape=prefer_json_copy,
    setup="Monetizze → Ferramentas → Postback: URL …/pb/monetizze?token=WORKSPACE_TOKEN for each "
    "product. Copy the 'chave única' into the merchant's secret.",
    secret_names=("chave_unica",),
)


# tipoEvento[codigo] and venda[status]
WORDS = {
    Status.APPROVED: ("2", "Finalizada"),
    Status.PENDING: ("1", "Aguardando pagamento"),
    Status.DECLINED: ("3", "Cancelada"),
    Status.REFUNDED: ("4", "Devolvida"),
    Status.CHARGEBACK: ("5", "Bloqueada"),
}


def build(sale: Sale) -> SampleRequest:
    postback: dict[str, Any] = {
        "chave_unica": sale.secret,
        "tipoPostback": {"codigo": "2", "descricao": "Produtor"},
        "tipoEvento": {"codigo": sale.event, "descricao": sale.status},
        "produto": {"codigo": "0", "nome": PRODUCT},
        "venda": {
            "codigo": sale.txid,
            "dataInicio": local_time(sale.sent_at),
            "status": sale.status,
            "valor": f"{sale.value:.2f}",
            "valorRecebido": f"{net(sale.value):.2f}",
            "formaPagamento": "Cartão de crédito",
            "src": sale.click_id,
        },
        "comprador": {"nome": BUYER["name"], "email": BUYER["email"]},
    }
    fields: dict[str, str | None] = {}
    for group, value in postback.items():
        if isinstance(value, dict):
            fields.update({f"{group}[{key}]": item for key, item in value.items()})
        else:
            fields[group] = value
    fields["json"] = json.dumps(postback, ensure_ascii=False)
    return form_request(fields)


SAMPLE = Sample(by_status(WORDS), build)
