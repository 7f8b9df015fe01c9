"""Ticto webhook v2: JSON POST, `token` in the body, amounts in cents."""

from __future__ import annotations

from trilha.money import ValueUnit
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule, Status

STATUSES = {
    "authorized": Status.APPROVED,
    "waiting_payment": Status.PENDING,
    "pix_created": Status.PENDING,
    "bank_slip_created": Status.PENDING,
    "refused": Status.DECLINED,
    "pix_expired": Status.DECLINED,
    "bank_slip_delayed": Status.DECLINED,
    "refunded": Status.REFUNDED,
    "chargeback": Status.CHARGEBACK,
    "claimed": Status.APPROVED,
}

PRESET = Preset(
    name="ticto",
    label="Ticto",
    paths={
        "click_id": ("tracking.sck", "tracking.src"),
        "event": (),
        "status": ("status",),
        "value": ("order.paid_amount",),
        "net_value": ("producer.amount",),
        "currency": (),
        "txid": ("order.hash", "order.transaction_hash", "transaction.hash"),
        "secret": ("token",),
    },
    rules=(
        *(Rule("SALE", status, when_status=name) for name, status in STATUSES.items()),
        Rule("SALE", IGNORE),
    ),
    value_unit=ValueUnit.CENTS,
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    empty_values=frozenset({"", "null", "none", "undefined", "não informado", "nao informado"}),
    setup="Ticto → Integrações → Webhook v2: URL …/pb/ticto?token=WORKSPACE_TOKEN. Copy the "
    "webhook token into the merchant's secret.",
)
