"""Kiwify: JSON POST, ?signature= HMAC-SHA1 of the raw body keyed with the webhook token.

The sample delivery is JSON in cents, signed like the platform's (the token as the key).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from uuid import NAMESPACE_URL, uuid5

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
    local_time,
    net,
)


def unwrap_order(payload: Tree) -> Tree:
    """Some deliveries wrap the order as {"order": {...}}."""
    order = payload.get("order")
    if isinstance(order, dict) and "order_id" not in payload:
        return {**order, **{k: v for k, v in payload.items() if k != "order"}}
    return payload


PRESET = Preset(
    name="kiwify",
    label="Kiwify",
    paths={
        "click_id": ("TrackingParameters.sck", "TrackingParameters.src", "TrackingParameters.s1"),
        "event": ("webhook_event_type",),
        # An abandoned cart has no order: its `status: "abandoned"` sits at the root, with no
        # event name; without this path it read as an approved sale with no status.
        "status": ("order_status", "status"),
        "value": ("Commissions.charge_amount",),
        "net_value": ("Commissions.my_commission",),
        "currency": ("Commissions.currency",),
        "txid": ("order_id",),
        "occurred_at": ("updated_at",),
        "secret": ("signature",),
    },
    rules=(
        Rule("SALE", Status.APPROVED, when_event="order_approved"),
        Rule("SALE", Status.PENDING, when_event="billet_created"),
        Rule("SALE", Status.PENDING, when_event="pix_created"),
        Rule("SALE", Status.DECLINED, when_event="order_rejected"),
        Rule("SALE", Status.REFUNDED, when_event="order_refunded"),
        Rule("SALE", Status.CHARGEBACK, when_event="chargeback"),
        Rule("REBILL", Status.APPROVED, when_event="subscription_renewed"),
        # An overdue renewal: the charge may still be paid, and its approval then counts.
        Rule("REBILL", Status.PENDING, when_event="subscription_late"),
        # A cancelled subscription is no refund of what was paid: logged, never counted.
        Rule("SALE", IGNORE, when_event="subscription_canceled"),
        Rule("SALE", Status.APPROVED, when_status="paid"),
        Rule("SALE", Status.PENDING, when_status="waiting_payment"),
        Rule("SALE", Status.DECLINED, when_status="refused"),
        Rule("SALE", Status.REFUNDED, when_status="refunded"),
        Rule("SALE", Status.CHARGEBACK, when_status="chargedback"),
        Rule("LEAD", IGNORE, when_status="abandoned"),
    ),
    value_unit=ValueUnit.CENTS,
    auth=AuthKind.HMAC_SHA1_QUERY,
    auth_param="signature",
    reshape=unwrap_order,
    setup="Kiwify → Apps → Webhooks: URL …/pb/kiwify?token=WORKSPACE_TOKEN, all purchase "
    "triggers. Copy the webhook's token into the merchant's secret.",
)


WORDS = {
    Status.APPROVED: ("order_approved", "paid"),
    Status.PENDING: ("pix_created", "waiting_payment"),
    Status.DECLINED: ("order_rejected", "refused"),
    Status.REFUNDED: ("order_refunded", "refunded"),
    Status.CHARGEBACK: ("chargeback", "chargedback"),
}


def build(sale: Sale) -> SampleRequest:
    charge, mine = cents(sale.value), cents(net(sale.value))
    request = json_request(
        {
            "order_id": sale.txid,
            "order_ref": str(uuid5(NAMESPACE_URL, f"kiwify:{sale.txid}"))[:8].upper(),
            "order_status": sale.status,
            "webhook_event_type": sale.event,
            "payment_method": "credit_card",
            "installments": 1,
            "created_at": local_time(sale.sent_at, "%Y-%m-%d %H:%M"),
            "updated_at": local_time(sale.sent_at, "%Y-%m-%d %H:%M"),
            "Product": {"product_id": "test", "product_name": PRODUCT},
            "Customer": {"full_name": BUYER["name"], "email": BUYER["email"]},
            "Commissions": {
                "charge_amount": charge,
                "product_base_price": charge,
                "kiwify_fee": charge - mine,
                "my_commission": mine,
                "currency": sale.currency,
            },
            "TrackingParameters": {"src": None, "sck": sale.click_id, "utm_source": None},
        }
    )
    if not sale.secret:
        return request
    signature = hmac.new(sale.secret.encode(), request.body, hashlib.sha1).hexdigest()
    return replace(request, query=f"signature={signature}")


SAMPLE = Sample(by_status(WORDS), build)
