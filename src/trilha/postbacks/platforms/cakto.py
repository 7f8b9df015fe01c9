"""Cakto webhook: JSON POST {secret, event, data}, the webhook's `secret` in the body, the
event naming what happened (`purchase_approved`, `pix_gerado`, `refund`, ...), amounts in
reais, tracking (`sck`, `utm_*`) at the top of `data`. Cakto's own documentation gives the
layout with examples (confidence high).

The sample delivery is that JSON, the click id in `data.sck`.
"""

from __future__ import annotations

from typing import Any

from trilha.conversions.status import Status
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule
from trilha.postbacks.sample import (
    BUYER,
    PRODUCT,
    Sale,
    Sample,
    SampleRequest,
    by_status,
    json_request,
    net,
)

EVENTS = {
    "purchase_approved": ("SALE", Status.APPROVED),
    "boleto_gerado": ("SALE", Status.PENDING),
    "pix_gerado": ("SALE", Status.PENDING),
    "picpay_gerado": ("SALE", Status.PENDING),
    "purchase_refused": ("SALE", Status.DECLINED),
    "refund": ("SALE", Status.REFUNDED),
    "chargeback": ("SALE", Status.CHARGEBACK),
    "subscription_renewed": ("REBILL", Status.APPROVED),
    "checkout_abandonment": ("LEAD", IGNORE),
    "subscription_canceled": ("SALE", IGNORE),
}

PRESET = Preset(
    name="cakto",
    label="Cakto",
    paths={
        "click_id": ("data.sck", "data.utm_content"),
        "event": ("event",),
        "status": ("data.status",),
        "value": ("data.amount", "data.baseAmount"),
        "net_value": ("data.commissions.0.totalAmount",),
        "currency": (),
        "txid": ("data.id",),
        "secret": ("secret",),
    },
    rules=(
        *(Rule(kind, status, when_event=event) for event, (kind, status) in EVENTS.items()),
        Rule("SALE", IGNORE),
    ),
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    setup="Cakto → Integrações → Webhooks: URL …/pb/cakto?token=WORKSPACE_TOKEN, the purchase "
    "events. Copy the webhook's secret into the merchant's secret; send the click id as ?sck= "
    "on the checkout.",
    secret_names=("secret",),
)


WORDS = {
    Status.APPROVED: ("purchase_approved", "paid"),
    Status.PENDING: ("pix_gerado", "waiting_payment"),
    Status.DECLINED: ("purchase_refused", "refused"),
    Status.REFUNDED: ("refund", "refunded"),
    Status.CHARGEBACK: ("chargeback", "chargedback"),
}


def build(sale: Sale) -> SampleRequest:
    at = sale.sent_at.isoformat()
    amount = float(sale.value)
    data: dict[str, Any] = {
        "id": sale.txid,
        "refId": sale.txid[:7],
        "customer": {"name": BUYER["name"], "email": BUYER["email"]},
        "offer": {"id": "test", "name": PRODUCT, "price": amount},
        "product": {"id": "test", "name": PRODUCT, "type": "unique"},
        "status": sale.status,
        "baseAmount": amount,
        "amount": amount,
        "commissions": [
            {"totalAmount": float(net(sale.value)), "percentage": 100, "type": "producer"}
        ],
        "paymentMethod": "credit_card",
        "installments": 1,
        "utm_source": None,
        "utm_content": None,
        "sck": sale.click_id,
        "createdAt": at,
    }
    return json_request({"secret": sale.secret, "event": sale.event, "data": data})


SAMPLE = Sample(by_status(WORDS), build)
