"""Payt postback (PayT V1): JSON POST of the order, its `status` saying why it was sent
(`waiting_payment`, `paid`, `cancelled`, `subscription_renewed`, ...), the sale in
`transaction_id`, amounts in cents (`transaction.total_price`), the checkout's tracking in
`link.sources` (`utm_*`, `src`), the account's `integration_key` in the body. From a public guide
to Payt's postback with full examples (confidence medium).

The sample delivery is that JSON, the click id in `link.sources.src`.
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

STATUSES = {
    "paid": ("SALE", Status.APPROVED),
    # A physical order's later steps: still the paid sale (a repeat of `paid` is a duplicate).
    "billed": ("SALE", Status.APPROVED),
    "separation": ("SALE", Status.APPROVED),
    "collected_order": ("SALE", Status.APPROVED),
    "shipping": ("SALE", Status.APPROVED),
    "shipped": ("SALE", Status.APPROVED),
    "waiting_payment": ("SALE", Status.PENDING),
    "cancelled": ("SALE", Status.DECLINED),
    "subscription_renewed": ("REBILL", Status.APPROVED),
    # An overdue renewal: pending until paid (Payt then sends subscription_renewed).
    "subscription_overdue": ("REBILL", Status.PENDING),
    # The first charge is counted by its `paid` postback; ending a subscription refunds nothing.
    "subscription_activated": ("SALE", IGNORE),
    "subscription_canceled": ("SALE", IGNORE),
    "lost_cart": ("LEAD", IGNORE),
}
COMMISSIONS = "commission_by_type"  # where index_commissions puts commission[] by type


def index_commissions(payload: Tree) -> Tree:
    """Make ``commission[{type, amount}]`` addressable by type: commission_by_type.producer."""
    commission = payload.get("commission")
    if not isinstance(commission, list):
        return payload
    by_type = {
        str(item["type"]): item.get("amount")
        for item in commission
        if isinstance(item, dict) and item.get("type")
    }
    return {**payload, COMMISSIONS: by_type}


PRESET = Preset(
    name="payt",
    label="Payt",
    paths={
        "click_id": ("link.sources.src", "link.sources.sck", "link.query_params.src"),
        "event": (),
        "status": ("status",),
        "value": ("transaction.total_price", "product.price"),
        "net_value": (f"{COMMISSIONS}.producer", f"{COMMISSIONS}.affiliation"),
        "currency": (),
        "txid": ("transaction_id",),
        "secret": ("integration_key",),
    },
    # No catch-all: a status not listed (a refund's or a chargeback's, which the guide does not
    # show) is read with the usual words (`refunded`, `chargeback`), or logged as invalid.
    rules=tuple(Rule(kind, status, when_status=name) for name, (kind, status) in STATUSES.items()),
    value_unit=ValueUnit.CENTS,
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    reshape=index_commissions,
    setup="Payt → Ofertas & Produtos → Postbacks → Cadastrar: type PayT V1, URL "
    "…/pb/payt?token=WORKSPACE_TOKEN, the order and subscription events. Copy the integration "
    "key into the merchant's secret; send the click id as ?src= on the checkout.",
    secret_names=("integration_key",),
)


WORDS = {
    Status.APPROVED: (None, "paid"),
    Status.PENDING: (None, "waiting_payment"),
    Status.DECLINED: (None, "cancelled"),
    Status.REFUNDED: (None, "refunded"),
    Status.CHARGEBACK: (None, "chargeback"),
}


def build(sale: Sale) -> SampleRequest:
    total, mine = cents(sale.value), cents(net(sale.value))
    body: dict[str, Any] = {
        "integration_key": sale.secret,
        "transaction_id": sale.txid,
        "seller_id": "TEST01",
        "test": False,
        "status": sale.status,
        "type": "order",
        "tangible": False,
        "customer": {"name": BUYER["name"], "email": BUYER["email"]},
        "product": {"code": "TEST01", "type": "digital", "name": PRODUCT, "price": total},
        "link": {"title": PRODUCT, "sources": {"src": sale.click_id, "utm_source": None}},
        "transaction": {
            "created_at": local_time(sale.sent_at),
            "payment_method": "credit_card",
            "payment_status": sale.status,
            "total_price": total,
            "installments": 1,
        },
        "commission": [
            {"type": "platform", "amount": total - mine},
            {"type": "producer", "amount": mine},
        ],
    }
    return json_request(body)


SAMPLE = Sample(by_status(WORDS), build)
