"""Ticto webhook v2: JSON in cents, `token` in the body, "Não Informado" for empty tracking."""

from __future__ import annotations

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
