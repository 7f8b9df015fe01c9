"""Kirvano webhook: JSON POST naming the event (`SALE_APPROVED`, `PIX_GENERATED`, ...) and the
sale's `status`, the sale in `sale_id`, the amount as text (`"R$ 197,00"`), the checkout's
tracking parameters in `utm` (`src`, `utm_*`). The token typed in Kirvano's panel travels in a
header whose name integrations disagree on (`security-token` or `x-kirvano-token`), so the check
applies only when the merchant has a secret. From public integrations (confidence medium).

The sample delivery is that JSON, the click id in `utm.src`.
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
    local_time,
    net,
)

EVENTS = {
    "SALE_APPROVED": ("SALE", Status.APPROVED),
    "PIX_GENERATED": ("SALE", Status.PENDING),
    "BANK_SLIP_GENERATED": ("SALE", Status.PENDING),
    "SALE_REFUSED": ("SALE", Status.DECLINED),
    "PIX_EXPIRED": ("SALE", Status.PENDING),  # past its date, a PIX or boleto may still be paid
    "BANK_SLIP_EXPIRED": ("SALE", Status.PENDING),
    "SALE_REFUNDED": ("SALE", Status.REFUNDED),
    "SALE_CHARGEBACK": ("SALE", Status.CHARGEBACK),
    "SUBSCRIPTION_RENEWED": ("REBILL", Status.APPROVED),
    # A late renewal ("assinatura atrasada"): its charge may still be paid, so never a decline.
    "SUBSCRIPTION_EXPIRED": ("REBILL", Status.PENDING),
    # Ending a subscription refunds nothing: the first sale stays counted.
    "SUBSCRIPTION_CANCELED": ("SALE", IGNORE),
    "ABANDONED_CART": ("LEAD", IGNORE),
}

PRESET = Preset(
    name="kirvano",
    label="Kirvano",
    paths={
        "click_id": ("utm.src", "utm.sck"),
        "event": ("event",),
        "status": ("status",),
        "value": ("total_price",),
        "net_value": ("fiscal.net_value",),
        "currency": (),
        "txid": ("sale_id",),
        "secret": ("security-token", "x-kirvano-token"),
    },
    rules=(
        *(Rule(kind, status, when_event=event) for event, (kind, status) in EVENTS.items()),
        Rule("SALE", IGNORE),
    ),
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    setup="Kirvano → Integrações → Webhooks: URL …/pb/kirvano?token=WORKSPACE_TOKEN, the sale "
    "and subscription events. If you type a token there, copy it into the merchant's secret; "
    "send the click id as ?src= on the checkout.",
    secret_names=("security-token", "x-kirvano-token"),
)


WORDS = {
    Status.APPROVED: ("SALE_APPROVED", "APPROVED"),
    Status.PENDING: ("PIX_GENERATED", "PENDING"),
    Status.DECLINED: ("SALE_REFUSED", "REFUSED"),
    Status.REFUNDED: ("SALE_REFUNDED", "REFUNDED"),
    Status.CHARGEBACK: ("SALE_CHARGEBACK", "CHARGEBACK"),
}


def brl_text(amount: float) -> str:
    """Kirvano's way of writing an amount: R$ 1.234,56."""
    whole, cents = f"{amount:,.2f}".split(".")
    return f"R$ {whole.replace(',', '.')},{cents}"


def build(sale: Sale) -> SampleRequest:
    price = brl_text(float(sale.value))
    body: dict[str, Any] = {
        "event": sale.event,
        "event_description": "Evento de teste",
        "checkout_id": f"chk-{sale.txid}",
        "sale_id": sale.txid,
        "payment_method": "CREDIT_CARD",
        "total_price": price,
        "type": "ONE_TIME",
        "status": sale.status,
        "created_at": local_time(sale.sent_at),
        "customer": {"name": BUYER["name"], "email": BUYER["email"]},
        "payment": {"method": "CREDIT_CARD", "installments": 1},
        "products": [{"id": "test", "name": PRODUCT, "price": price, "is_order_bump": False}],
        "fiscal": {"total_value": float(sale.value), "net_value": float(net(sale.value))},
        "utm": {"src": sale.click_id, "utm_source": None},
    }
    headers = (("security-token", sale.secret),) if sale.secret else ()
    return json_request(body, headers)


SAMPLE = Sample(by_status(WORDS), build)
