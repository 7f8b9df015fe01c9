"""Hotmart webhook 2.0.0: JSON POST, hottok in the X-HOTMART-HOTTOK header (and the body).

The sample delivery is the JSON envelope, with the hottok in the header and in the body.
"""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, uuid5

from trilha.conversions.status import Status
from trilha.postbacks.payload import Tree, get_path
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule
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

RENEWAL = ":RENEWAL"  # marks the event of a subscription's second or later charge


def reshape(payload: Tree) -> Tree:
    """Commissions addressable by source, and a renewal's event told apart from a first sale."""
    return mark_renewal(index_commissions(payload))


def index_commissions(payload: Tree) -> Tree:
    """Make ``data.commissions[]`` addressable by source: data.commission_by_source.PRODUCER."""
    data = payload.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("commissions"), list):
        return payload
    by_source = {
        str(item.get("source")): item.get("value")
        for item in data["commissions"]
        if isinstance(item, dict) and item.get("source")
    }
    return {**payload, "data": {**data, "commission_by_source": by_source}}


def mark_renewal(payload: Tree) -> Tree:
    """A subscription's later charges carry ``data.purchase.recurrence_number`` 2, 3, ...: their
    event reads PURCHASE_APPROVED:RENEWAL, which the rules book as a REBILL.

    >>> mark_renewal({"event": "PURCHASE_APPROVED", "data": {"purchase": {"recurrence_number": 3}}})
    {'event': 'PURCHASE_APPROVED:RENEWAL', 'data': {'purchase': {'recurrence_number': 3}}}
    >>> mark_renewal({"event": "PURCHASE_APPROVED", "data": {"purchase": {"recurrence_number": 1}}})
    {'event': 'PURCHASE_APPROVED', 'data': {'purchase': {'recurrence_number': 1}}}
    """
    event, charge = payload.get("event"), get_path(payload, "data.purchase.recurrence_number")
    if not isinstance(event, str) or not str(charge).isdecimal() or int(str(charge)) < 2:
        return payload
    return {**payload, "event": event + RENEWAL}


# The purchase events, each (event type, status) for a first charge; a renewal's is a REBILL.
PURCHASE_EVENTS = {
    "PURCHASE_APPROVED": Status.APPROVED,
    "PURCHASE_COMPLETE": Status.APPROVED,
    "PURCHASE_BILLET_PRINTED": Status.PENDING,
    "PURCHASE_DELAYED": Status.PENDING,  # overdue: Hotmart retries the charge
    "PURCHASE_EXPIRED": Status.PENDING,  # boleto or PIX not paid in time: it may still be
    "PURCHASE_CANCELED": Status.DECLINED,  # card refused: an approval later recovers it
    "PURCHASE_REFUNDED": Status.REFUNDED,
    "PURCHASE_CHARGEBACK": Status.CHARGEBACK,
}


PRESET = Preset(
    name="hotmart",
    label="Hotmart",
    paths={
        "click_id": (
            "data.purchase.origin.sck",
            "data.purchase.origin.src",
            "data.purchase.origin.xcod",
        ),
        "event": ("event",),
        "status": ("data.purchase.status",),
        "value": ("data.purchase.price.value",),
        "net_value": ("data.commission_by_source.PRODUCER", "data.commission_by_source.AFFILIATE"),
        "currency": ("data.purchase.price.currency_value",),
        "txid": ("data.purchase.transaction",),
        "occurred_at": ("creation_date",),
        "secret": ("x-hotmart-hottok", "hottok"),
    },
    rules=(
        *(Rule("SALE", status, when_event=event) for event, status in PURCHASE_EVENTS.items()),
        *(
            Rule("REBILL", status, when_event=event + RENEWAL)
            for event, status in PURCHASE_EVENTS.items()
        ),
        Rule("SALE", IGNORE, when_event="PURCHASE_PROTEST"),
        Rule("REBILL", IGNORE, when_event="PURCHASE_PROTEST" + RENEWAL),
        Rule("LEAD", IGNORE, when_event="PURCHASE_OUT_OF_SHOPPING_CART"),
        # A cancelled subscription is no refund of what was paid: logged, never counted; so are
        # plan switches, charge date changes, club and fulfilment events.
        Rule("SALE", IGNORE),
    ),
    auth=AuthKind.FIELD,
    reshape=reshape,
    setup="Hotmart → Ferramentas → Webhook: URL …/pb/hotmart?token=WORKSPACE_TOKEN, version 2.0.0, "
    "purchase events. Copy the hottok into the merchant's secret.",
    secret_names=("hottok", "x-hotmart-hottok"),
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
