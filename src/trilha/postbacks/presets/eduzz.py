"""Eduzz webhook (legacy, Órbita): form or JSON, `origin` carries the security token."""

from __future__ import annotations

from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule, Status

STATUS_CODES = {
    "1": Status.PENDING,
    "3": Status.APPROVED,
    "4": Status.DECLINED,
    "6": Status.APPROVED,
    "7": Status.REFUNDED,
    "8": Status.PENDING,
    "10": Status.DECLINED,
    "11": Status.PENDING,
    "15": Status.PENDING,
}

PRESET = Preset(
    name="eduzz",
    label="Eduzz",
    paths={
        "click_id": ("tracker_trk", "tracker_utm_content"),
        "event": (),
        "status": ("trans_status",),
        "value": ("trans_value", "trans_paid"),
        "net_value": ("pro_value", "aff_value"),
        "currency": ("trans_currency",),
        "txid": ("trans_cod",),
        "secret": ("origin", "api_key"),
    },
    rules=(
        *(Rule("SALE", status, when_status=code) for code, status in STATUS_CODES.items()),
        Rule("SALE", IGNORE),  # 9 duplicated invoice and anything unknown
    ),
    auth=AuthKind.FIELD,
    setup="Eduzz → Órbita → Configurações → Webhook: URL …/pb/eduzz?token=WORKSPACE_TOKEN. Copy "
    "the 'origin' token into the merchant's secret; send the click id as ?trk= on the checkout.",
    secret_names=("origin", "api_key"),
)
