"""Perfect Pay: JSON POST, `token` at the root of the body, the same webhook for every status."""

from __future__ import annotations

from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule, Status

STATUS_CODES = {
    "1": Status.PENDING,
    "2": Status.APPROVED,
    "3": Status.PENDING,
    "4": Status.CHARGEBACK,
    "5": Status.DECLINED,
    "6": Status.DECLINED,
    "7": Status.REFUNDED,
    "8": Status.PENDING,
    "9": Status.CHARGEBACK,
    "10": Status.APPROVED,
    "13": Status.DECLINED,
    "16": Status.PENDING,
}

PRESET = Preset(
    name="perfectpay",
    label="Perfect Pay",
    paths={
        "click_id": ("metadata.src", "metadata.sck", "metadata.utm_perfect"),
        "event": (),
        "status": ("sale_status_enum",),
        "value": ("sale_amount",),
        "net_value": ("commission_amount",),
        "currency": ("currency_enum_key",),
        "txid": ("code",),
        "secret": ("token",),
    },
    rules=(
        *(Rule("SALE", status, when_status=code) for code, status in STATUS_CODES.items()),
        Rule("SALE", IGNORE),  # 0 none, 11 checkout error, 12 pre-checkout
    ),
    auth=AuthKind.FIELD,
    setup="Perfect Pay → Ferramentas → Webhook: URL …/pb/perfectpay?token=WORKSPACE_TOKEN. Copy "
    "the webhook token into the merchant's secret.",
)
