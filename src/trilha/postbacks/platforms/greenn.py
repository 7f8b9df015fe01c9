"""Greenn webhook: JSON POST, `saleUpdated` events with the status in `currentStatus` (and
`sale.status`), the sale's id in `sale.id`, tracking in the `saleMetas` list of
{meta_key, meta_value}. One integration each for most fields (confidence low): the unit of
`sale.amount` and the way Greenn authenticates are unconfirmed.

The sample delivery is that JSON, the click id in `saleMetas` under `src`.
"""

from __future__ import annotations

from typing import Any

from trilha.conversions.status import Status
from trilha.postbacks.payload import Tree
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
)

STATUSES = {
    "paid": Status.APPROVED,
    "waiting_payment": Status.PENDING,
    "refused": Status.DECLINED,
    "canceled": Status.DECLINED,
    "refunded": Status.REFUNDED,
    "chargedback": Status.CHARGEBACK,
}
METAS = "sale_meta"  # where index_metas puts saleMetas as a map


def index_metas(payload: Tree) -> Tree:
    """Make ``saleMetas[{meta_key, meta_value}]`` addressable by key: sale_meta.src."""
    metas = payload.get("saleMetas")
    if not isinstance(metas, list):
        return payload
    by_key = {
        str(item["meta_key"]): item.get("meta_value")
        for item in metas
        if isinstance(item, dict) and item.get("meta_key")
    }
    return {**payload, METAS: by_key}


PRESET = Preset(
    name="greenn",
    label="Greenn",
    paths={
        "click_id": (f"{METAS}.src", f"{METAS}.sck", f"{METAS}.xcod"),
        "event": ("event",),
        "status": ("currentStatus", "sale.status"),
        "value": ("sale.amount",),
        "net_value": (),
        "currency": (),
        "txid": ("sale.id",),
        "secret": ("x-greenn-token",),
    },
    rules=(
        Rule("LEAD", IGNORE, when_event="checkoutAbandoned"),  # an abandoned checkout
        Rule("SALE", IGNORE, when_event="contractUpdated"),  # the subscription, not a payment
        *(Rule("SALE", status, when_status=name) for name, status in STATUSES.items()),
        Rule("SALE", IGNORE),
    ),
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    reshape=index_metas,
    setup="Greenn → Configurações → Webhooks (or the product's integrations): URL "
    "…/pb/greenn?token=WORKSPACE_TOKEN, sale events. If Greenn shows a webhook token, copy it "
    "into the merchant's secret; send the click id as ?src= on the checkout.",
)


WORDS = {
    Status.APPROVED: ("saleUpdated", "paid"),
    Status.PENDING: ("saleUpdated", "waiting_payment"),
    Status.DECLINED: ("saleUpdated", "refused"),
    Status.REFUNDED: ("saleUpdated", "refunded"),
    Status.CHARGEBACK: ("saleUpdated", "chargedback"),
}


def build(sale: Sale) -> SampleRequest:
    created = local_time(sale.sent_at)
    body: dict[str, Any] = {
        "type": "sale",
        "event": sale.event,
        "oldStatus": None,
        "currentStatus": sale.status,
        "sale": {
            "id": sale.txid,
            "status": sale.status,
            "method": "CREDIT_CARD",
            "amount": float(sale.value),
            "installments": 1,
            "type": "TRANSACTION",
            "created_at": created,
        },
        "product": {"id": 0, "name": PRODUCT, "amount": float(sale.value)},
        "client": {"name": BUYER["name"], "email": BUYER["email"]},
        "saleMetas": [{"meta_key": "src", "meta_value": sale.click_id}],
    }
    headers = (("x-greenn-token", sale.secret),) if sale.secret else ()
    return json_request(body, headers)


SAMPLE = Sample(by_status(WORDS), build)
