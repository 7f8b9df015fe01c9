"""Ticto webhook v2: JSON POST, `token` in the body, amounts in cents.

The sample delivery is JSON in cents, `token` in the body, "Não Informado" for empty tracking.
"""

from __future__ import annotations

from trilha.conversions.status import Status
from trilha.money import ValueUnit
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

STATUSES = {
    "authorized": Status.APPROVED,
    "waiting_payment": Status.PENDING,
    "pix_created": Status.PENDING,
    "bank_slip_created": Status.PENDING,
    "refused": Status.DECLINED,
    "pix_expired": Status.PENDING,  # a PIX or boleto past its date may still be paid
    "bank_slip_delayed": Status.PENDING,
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
        "occurred_at": ("status_date",),
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


WORDS = {
    Status.APPROVED: (None, "authorized"),
    Status.PENDING: (None, "waiting_payment"),
    Status.DECLINED: (None, "refused"),
    Status.REFUNDED: (None, "refunded"),
    Status.CHARGEBACK: (None, "chargeback"),
}
EMPTY = "Não Informado"


def build(sale: Sale) -> SampleRequest:
    return json_request(
        {
            "version": "2.0",
            "token": sale.secret,
            "status": sale.status,
            "status_date": local_time(sale.sent_at),
            "payment_method": "credit_card",
            "order": {"hash": sale.txid, "paid_amount": cents(sale.value), "installments": 1},
            "item": {"product_name": PRODUCT, "amount": cents(sale.value)},
            "producer": {"amount": cents(net(sale.value))},
            "customer": BUYER,
            "tracking": {"sck": sale.click_id, "src": EMPTY, "utm_source": EMPTY},
        }
    )


SAMPLE = Sample(by_status(WORDS), build)
