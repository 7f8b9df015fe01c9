"""Hotmart webhook 2.0.0: a JSON envelope, the hottok in X-HOTMART-HOTTOK and in the body."""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, uuid5

from trilha.postbacks.preset import Status
from trilha.postbacks.sample import (
    BUYER,
    PRODUCT,
    Sale,
    Sample,
    SampleRequest,
    by_status,
    json_request,
    millis,
    net,
)

WORDS = {
    Status.APPROVED: ("PURCHASE_APPROVED", "APPROVED"),
    Status.PENDING: ("PURCHASE_BILLET_PRINTED", "BILLET_PRINTED"),
    Status.DECLINED: ("PURCHASE_CANCELED", "CANCELED"),
    Status.REFUNDED: ("PURCHASE_REFUNDED", "REFUNDED"),
    Status.CHARGEBACK: ("PURCHASE_CHARGEBACK", "CHARGEBACK"),
}


def build(sale: Sale) -> SampleRequest:
    price = {"value": float(sale.value), "currency_value": sale.currency}
    purchase: dict[str, Any] = {
        "transaction": sale.txid,
        "status": sale.status,
        "order_date": millis(sale.sent_at),
        "price": price,
        "full_price": price,
        "payment": {"type": "CREDIT_CARD", "installments_number": 1},
        "origin": {"sck": sale.click_id},
    }
    if sale.status == "APPROVED":
        purchase["approved_date"] = millis(sale.sent_at)
    commissions = [
        {"source": "MARKETPLACE", "value": float(sale.value - net(sale.value))},
        {"source": "PRODUCER", "value": float(net(sale.value))},
    ]
    envelope: dict[str, Any] = {
        "id": str(uuid5(NAMESPACE_URL, f"hotmart:{sale.txid}:{sale.event}")),
        "creation_date": millis(sale.sent_at),
        "event": sale.event,
        "version": "2.0.0",
        "data": {
            "product": {"id": 0, "name": PRODUCT},
            "buyer": BUYER,
            "purchase": purchase,
            "commissions": [{**c, "currency_value": sale.currency} for c in commissions],
        },
    }
    if not sale.secret:
        return json_request(envelope)
    return json_request({**envelope, "hottok": sale.secret}, (("x-hotmart-hottok", sale.secret),))


SAMPLE = Sample(by_status(WORDS), build)
