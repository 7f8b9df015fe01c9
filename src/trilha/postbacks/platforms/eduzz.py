"""Eduzz webhook (legacy, Órbita): form or JSON, `origin` carries the security token.

The sample delivery is a form, with `origin` carrying the security token.
"""

from __future__ import annotations

from trilha.conversions.status import Status
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule
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

STATUS_CODES = {
    "1": Status.PENDING,
    "3": Status.APPROVED,
    "4": Status.DECLINED,
    "6": Status.APPROVED,
    "7": Status.REFUNDED,
    "8": Status.PENDING,
    "10": Status.PENDING,  # Expirada: open for over 15 days, and still payable
    "11": Status.PENDING,
    "15": Status.PENDING,
}

PRESET = Preset(
    name="eduzz",
    label="Eduzz",
    paths={
        "click_id": ("tracker_trk", "tracker_utm_content"),
        "event": (),
        "status": ("trans_status",),
        "value": ("trans_value", "trans_paid"),
        "net_value": ("pro_value", "aff_value"),
        "currency": ("trans_currency",),
        "txid": ("trans_cod",),
        "secret": ("origin", "api_key"),
    },
    rules=(
        *(Rule("SALE", status, when_status=code) for code, status in STATUS_CODES.items()),
        Rule("SALE", IGNORE),  # 9 duplicated invoice and anything unknown
    ),
    auth=AuthKind.FIELD,
    setup="Eduzz → Órbita → Configurações → Webhook: URL …/pb/eduzz?token=WORKSPACE_TOKEN. Copy "
    "the 'origin' token into the merchant's secret; send the click id as ?trk= on the checkout.",
    secret_names=("origin", "api_key"),
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
