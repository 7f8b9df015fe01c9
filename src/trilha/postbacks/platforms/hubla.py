"""Hubla webhook v2: JSON POST `{type, event}`, the invoice in `event.invoice` (its `id`, `status`,
`amount.totalCents` in cents, `receivers[]` and the checkout's `utm` in `paymentSession` or
`firstPaymentSession`), the Hubla token in the `x-hubla-token` header. Hubla's own help center
documents the layout (confidence high), except what tells a renewal apart (inferred).

The sample delivery is that JSON, the click id in `paymentSession.utm.content`.
"""

from __future__ import annotations

from typing import Any

from trilha.conversions.status import Status
from trilha.money import ValueUnit
from trilha.postbacks.payload import Tree
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
    net,
)

RENEWAL = ":renewal"  # how name_invoice_event marks an event on a renewal's invoice


def name_invoice_event(payload: Tree) -> Tree:
    """Name the event for the rules: ``type``, plus ":renewal" on a renewal's invoice, and make
    ``receivers[]`` addressable by role (event.invoice.receiver_by_role.seller)."""
    event = payload.get("event")
    invoice = event.get("invoice") if isinstance(event, dict) else None
    if not isinstance(event, dict) or not isinstance(invoice, dict):
        return payload
    name = str(payload.get("type") or "")
    if str(invoice.get("type") or "").lower() == "renewal":
        name += RENEWAL
    receivers = invoice.get("receivers")
    by_role = {
        str(item["role"]): item.get("totalCents")
        for item in (receivers if isinstance(receivers, list) else [])
        if isinstance(item, dict) and item.get("role")
    }
    invoice = {**invoice, "receiver_by_role": by_role}
    return {**payload, "invoice_event": name, "event": {**event, "invoice": invoice}}


def _both(event: str, status: str | None, sale: str, rebill: str) -> tuple[Rule, Rule]:
    """The rule for a first sale's invoice and for a renewal's."""
    return (
        Rule("REBILL", rebill, when_event=event + RENEWAL, when_status=status),
        Rule("SALE", sale, when_event=event, when_status=status),
    )


PRESET = Preset(
    name="hubla",
    label="Hubla",
    paths={
        "click_id": (
            "event.invoice.paymentSession.utm.content",
            "event.invoice.firstPaymentSession.utm.content",
        ),
        "event": ("invoice_event", "type"),
        "status": ("event.invoice.status",),
        "value": ("event.invoice.amount.totalCents",),
        "net_value": ("event.invoice.receiver_by_role.seller",),
        "currency": ("event.invoice.currency",),
        "txid": ("event.invoice.id",),
        "secret": ("x-hubla-token",),
    },
    rules=(
        *_both("invoice.payment_succeeded", None, Status.APPROVED, Status.APPROVED),
        *_both("invoice.status_updated", "unpaid", Status.PENDING, Status.PENDING),
        *_both("invoice.status_updated", "paid", Status.APPROVED, Status.APPROVED),
        # A failed attempt leaves the invoice open: the buyer (or the next retry) may still pay it.
        *_both("invoice.payment_failed", None, Status.PENDING, Status.PENDING),
        # Past its due date an invoice may still be paid: pending, never a final decline.
        *_both("invoice.expired", None, Status.PENDING, Status.PENDING),
        *_both("invoice.refunded", None, Status.REFUNDED, Status.REFUNDED),
        # Invoice drafts, other status updates, subscriptions (a deactivation refunds nothing),
        # members and refund requests: logged only.
        Rule("SALE", IGNORE),
    ),
    value_unit=ValueUnit.CENTS,
    auth=AuthKind.FIELD,
    reshape=name_invoice_event,
    setup="Hubla → Integrações → Webhook: URL …/pb/hubla?token=WORKSPACE_TOKEN, version 2.0.0, "
    "the invoice events. Copy the Hubla token into the merchant's secret; send the click id as "
    "?utm_content= on the checkout.",
    secret_names=("x-hubla-token",),
)


WORDS = {
    Status.APPROVED: ("invoice.payment_succeeded", "paid"),
    Status.PENDING: ("invoice.status_updated", "unpaid"),
    Status.REFUNDED: ("invoice.refunded", "refunded"),
}


def build(sale: Sale) -> SampleRequest:
    total, mine = cents(sale.value), cents(net(sale.value))
    invoice: dict[str, Any] = {
        "id": sale.txid,
        "payer": {"firstName": BUYER["name"], "email": BUYER["email"]},
        "installments": 1,
        "paymentMethod": "credit_card",
        "currency": sale.currency,
        "type": "sell",
        "status": sale.status,
        "amount": {"subtotalCents": total, "discountCents": 0, "totalCents": total},
        "receivers": [
            {"id": "platform-identity", "role": "platform", "totalCents": total - mine},
            {"id": "seller", "role": "seller", "totalCents": mine},
        ],
        "paymentSession": {"utm": {"source": None, "content": sale.click_id}},
    }
    body = {
        "type": sale.event,
        "event": {"product": {"id": "test", "name": PRODUCT}, "invoice": invoice},
    }
    headers = (("x-hubla-token", sale.secret),) if sale.secret else ()
    return json_request(body, headers)


SAMPLE = Sample(by_status(WORDS), build)
