"""Perfect Pay: JSON with the webhook token at the root; the status is a number."""

from __future__ import annotations

from trilha.postbacks.preset import Status
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

# sale_status_enum, and its sale_status_enum_key
WORDS = {
    Status.APPROVED: (None, "2"),
    Status.PENDING: (None, "1"),
    Status.DECLINED: (None, "5"),
    Status.REFUNDED: (None, "7"),
    Status.CHARGEBACK: (None, "9"),
}
KEYS = {"1": "pending", "2": "approved", "5": "rejected", "7": "refunded", "9": "charged_back"}


def build(sale: Sale) -> SampleRequest:
    code = sale.status or ""
    return json_request(
        {
            "token": sale.secret,
            "code": sale.txid,
            "sale_amount": float(sale.value),
            "commission_amount": float(net(sale.value)),
            "currency_enum_key": sale.currency,
            "sale_status_enum": int(code) if code.isascii() and code.isdigit() else code,
            "sale_status_enum_key": KEYS.get(code),
            "payment_type_enum_key": "credit_card",
            "date_created": local_time(sale.sent_at),
            "product": {"code": "test", "name": PRODUCT},
            "customer": {"full_name": BUYER["name"], "email": BUYER["email"]},
            "metadata": {"src": sale.click_id, "sck": None, "utm_source": None},
        }
    )


SAMPLE = Sample(by_status(WORDS), build)
