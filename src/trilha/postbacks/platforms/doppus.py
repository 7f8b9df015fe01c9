"""Doppus webhook: JSON POST. Doppus publishes only the list of triggers and that a token goes
with every delivery; public integrations show two layouts, so both are read (confidence low):

- the status layout (most integrations): `status.code` (`approved`, `waiting`, `refunded`, ...),
  the sale in `transaction.code`, its `transaction.total` in cents, the buyer in `customer`, the
  checkout's tracking in `tracking` (`src`, `utm_*`);
- the event layout (fewer): an `event` name (`PAYMENT_APPROVED`, ...) beside a `data` object
  holding the same kind of fields (`transaction_code`, `status_text`, `customer`), lifted to the
  top by lift_data so one set of paths reads both.

The token travels in the `doppus-token` header (three integrations agree), `x-doppus-token` in
one more: both are read, and checked only when the merchant has a secret.

The sample delivery is the status layout, the click id in `tracking.src`.
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
    local_time,
    net,
)

# The event layout's names (one integration each).
EVENTS = {
    "PAYMENT_APPROVED": ("SALE", Status.APPROVED),
    "PAYMENT_REFUNDED": ("SALE", Status.REFUNDED),
    # A subscription past its renewal: the charge may still be paid, so never a decline.
    "SUBSCRIPTION_EXPIRED": ("REBILL", Status.PENDING),
    # Ending a subscription refunds nothing: the first sale stays counted.
    "SUBSCRIPTION_CANCELLED": ("SALE", IGNORE),
}
# The status layout's `status.code` words, as integrations handle them.
STATUSES = {
    "approved": ("SALE", Status.APPROVED),
    "waiting": ("SALE", Status.PENDING),  # a boleto or PIX generated, not paid yet
    "waiting_payment": ("SALE", Status.PENDING),
    "pending": ("SALE", Status.PENDING),
    "in_analysis": ("SALE", Status.PENDING),
    "expired": ("SALE", Status.PENDING),  # past its date, a boleto or PIX may still be paid
    "refused": ("SALE", Status.DECLINED),
    "canceled": ("SALE", Status.DECLINED),
    "cancelled": ("SALE", Status.DECLINED),
    "refunded": ("SALE", Status.REFUNDED),
    "reversed": ("SALE", Status.REFUNDED),  # "estornado"
    "chargeback": ("SALE", Status.CHARGEBACK),
    "renewed": ("REBILL", Status.APPROVED),
    "renewal": ("REBILL", Status.APPROVED),
    "subscription_canceled": ("SALE", IGNORE),
    "abandoned": ("LEAD", IGNORE),  # an abandoned checkout
    "cart_abandoned": ("LEAD", IGNORE),
}
SECRET_HEADERS = ("doppus-token", "x-doppus-token")


def lift_data(payload: Tree) -> Tree:
    """Read the event layout like the status layout: ``data``'s fields at the top, where the
    top does not have them already (its ``event`` stays the top's)."""
    data = payload.get("data")
    if not isinstance(data, dict):
        return payload
    return {**data, **payload}


PRESET = Preset(
    name="doppus",
    label="Doppus",
    paths={
        "click_id": ("tracking.src", "tracking.sck"),
        "event": ("event",),
        "status": ("status.code", "status_text"),
        "value": ("transaction.total",),
        "net_value": ("transaction.fee_producer",),
        "currency": (),
        "txid": ("transaction.code", "transaction_code"),
        "secret": SECRET_HEADERS,
    },
    rules=(
        *(Rule(kind, status, when_event=event) for event, (kind, status) in EVENTS.items()),
        *(Rule(kind, status, when_status=word) for word, (kind, status) in STATUSES.items()),
        Rule("SALE", IGNORE),
    ),
    value_unit=ValueUnit.CENTS,
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    reshape=lift_data,
    setup="Doppus → webhook (postback) settings: URL …/pb/doppus?token=WORKSPACE_TOKEN, every "
    "trigger. Copy the token Doppus shows there into the merchant's secret; send the click id as "
    "?src= on the checkout.",
    secret_names=SECRET_HEADERS,
)


WORDS = {
    Status.APPROVED: (None, "approved"),
    Status.PENDING: (None, "waiting"),
    Status.DECLINED: (None, "refused"),
    Status.REFUNDED: (None, "refunded"),
    Status.CHARGEBACK: (None, "chargeback"),
}


def build(sale: Sale) -> SampleRequest:
    total, mine = cents(sale.value), cents(net(sale.value))
    created = local_time(sale.sent_at)
    body: dict[str, Any] = {
        "customer": {"name": BUYER["name"], "email": BUYER["email"]},
        "items": [{"code": "test", "name": PRODUCT, "type": "principal", "value": total}],
        "transaction": {
            "code": sale.txid,
            "registration_date": created,
            "subtotal": total,
            "total": total,
            "fee_producer": mine,
        },
        "payment": {"method": "creditcard", "plots": 1},
        "tracking": {"src": sale.click_id, "utm_source": None},
        "status": {"registration_date": created, "code": sale.status, "message": sale.status},
    }
    headers = (("doppus-token", sale.secret),) if sale.secret else ()
    return json_request(body, headers)


SAMPLE = Sample(by_status(WORDS), build)
