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
        *(Rule("SALE", status, when_status=text) for text, status in STATUS_TEXTS.items()),
        Rule("SALE", IGNORE),  # 7 abandoned checkout, 98/99 payment method, 101-104 subscription
    ),
    auth=AuthKind.FIELD,
    reshape=prefer_json_copy,
    setup="Monetizze → Ferramentas → Postback: URL …/pb/monetizze?token=WORKSPACE_TOKEN for each "
    "product. Copy the 'chave única' into the merchant's secret.",
    secret_names=("chave_unica",),
)
