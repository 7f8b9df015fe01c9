"""Kiwify: JSON in cents, signed with ?signature= HMAC-SHA1 of the exact body (the token key)."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from uuid import NAMESPACE_URL, uuid5

from trilha.postbacks.preset import Status
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
