"""Perfect Pay: JSON POST, `token` at the root of the body, the same webhook for every status.

The sample delivery is JSON with the webhook token at the root; the status is a number.
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
    json_request,
    local_time,
    net,
)

STATUS_CODES = {
    "1": Status.PENDING,
    "2": Status.APPROVED,
    "3": Status.PENDING,
    "4": Status.CHARGEBACK,
    "5": Status.DECLINED,
    "6": Status.DECLINED,
    "7": Status.REFUNDED,
    "8": Status.PENDING,
    "9": Status.CHARGEBACK,
    "10": Status.APPROVED,
    "13": Status.PENDING,  # expired: a boleto or PIX past its date may still be paid
    "16": Status.PENDING,
}

PRESET = Preset(
    name="perfectpay",
    label="Perfect Pay",
    paths={
        "click_id": ("metadata.src", "metadata.sck", "metadata.utm_perfect"),
        "event": (),
        "status": ("sale_status_enum",),
        "value": ("sale_amount",),
        "net_value": ("commission_amount",),
        "currency": ("currency_enum_key",),
        "txid": ("code",),
        "secret": ("token",),
    },
    rules=(
        *(Rule("SALE", status, when_status=code) for code, status in STATUS_CODES.items()),
        Rule("SALE", IGNORE),  # 0 none, 11 checkout error, 12 pre-checkout
    ),
    auth=AuthKind.FIELD,
    setup="Perfect Pay → Ferramentas → Webhook: URL …/pb/perfectpay?token=WORKSPACE_TOKEN. Copy "
    "the webhook token into the merchant's secret.",
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
