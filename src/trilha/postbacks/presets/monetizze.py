"""Monetizze postback: form POST with bracket keys, the whole postback also as JSON in `json`."""

from __future__ import annotations

import json

from trilha.postbacks.payload import PayloadError, Tree, parse_json
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule, Status


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
