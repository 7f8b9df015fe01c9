"""Eduzz's legacy (Órbita) webhook: a form, `origin` carrying the security token."""

from __future__ import annotations

from trilha.postbacks.preset import Status
from trilha.postbacks.sample import (
    BUYER,
    PRODUCT,
    Sale,
    Sample,
    SampleRequest,
    by_status,
    form_request,
    local_time,
    net,
)

# trans_status codes; the legacy webhook has none for a chargeback.
WORDS = {
    Status.APPROVED: (None, "3"),
    Status.PENDING: (None, "1"),
    Status.DECLINED: (None, "4"),
    Status.REFUNDED: (None, "7"),
}


def build(sale: Sale) -> SampleRequest:
    return form_request(
        {
            "origin": sale.secret,
            "trans_cod": sale.txid,
            "trans_status": sale.status,
            "trans_value": f"{sale.value:.2f}",
            "trans_paid": f"{sale.value:.2f}",
            "trans_currency": sale.currency,
            "trans_paymentmethod": "13",  # Visa
            "trans_createdate": local_time(sale.sent_at, "%Y%m%d"),
            "trans_createtime": local_time(sale.sent_at, "%H:%M:%S"),
            "pro_value": f"{net(sale.value):.2f}",
            "product_name": PRODUCT,
            "cus_name": BUYER["name"],
            "cus_email": BUYER["email"],
            "tracker_trk": sale.click_id,
        }
    )


SAMPLE = Sample(by_status(WORDS), build)
