"""Eduzz webhook v3 (Developer Hub): JSON envelope {id, event, sentDate, data}, events named
`myeduzz.invoice_*`, `x-signature` the HMAC-SHA256 of the raw body keyed with the webhook's
secret. Community receivers give the layout; Eduzz's own schema was not public (confidence
medium-low).

The sample delivery is that envelope, signed like the platform's.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import replace
from typing import Any
from uuid import NAMESPACE_URL, uuid5

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
)

EVENTS = {
    "myeduzz.invoice_paid": Status.APPROVED,
    "myeduzz.invoice_opened": Status.PENDING,
    "myeduzz.invoice_waiting_payment": Status.PENDING,
    "myeduzz.invoice_canceled": Status.DECLINED,
    "myeduzz.invoice_refunded": Status.REFUNDED,
    "myeduzz.invoice_waiting_refund": Status.APPROVED,  # a refund request: the sale stands
    "myeduzz.invoice_chargeback": Status.CHARGEBACK,
}
SIGNATURE_HEADER = "x-signature"

PRESET = Preset(
    name="eduzz_v3",
    label="Eduzz (v3)",
    paths={
        "click_id": ("data.tracker.code1", "data.utm.content"),
        "event": ("event",),
        "status": ("data.status",),
        "value": ("data.price.value", "data.paid.value"),
        "net_value": (),
        "currency": ("data.price.currency", "data.paid.currency"),
        "txid": ("data.id",),
        "occurred_at": ("sentDate",),
        "secret": (),
    },
    rules=(
        *(Rule("SALE", status, when_event=event) for event, status in EVENTS.items()),
        Rule("SALE", IGNORE),  # subscriptions, cart abandonment and anything unknown
    ),
    auth=AuthKind.HMAC_SHA256_HEADER,
    auth_param=SIGNATURE_HEADER,
    setup="Eduzz → console.eduzz.com → Webhook → Configurações → Nova configuração: URL "
    "…/pb/eduzz_v3?token=WORKSPACE_TOKEN, the myeduzz.invoice_* events. Copy the webhook's "
    "secret into the merchant's secret; send the click id as ?trk= on the checkout.",
    secret_names=("data.producer.originSecret",),
)


WORDS = {
    Status.APPROVED: ("myeduzz.invoice_paid", "paid"),
    Status.PENDING: ("myeduzz.invoice_waiting_payment", "waiting_payment"),
    Status.DECLINED: ("myeduzz.invoice_canceled", "canceled"),
    Status.REFUNDED: ("myeduzz.invoice_refunded", "refunded"),
    Status.CHARGEBACK: ("myeduzz.invoice_chargeback", "chargeback"),
}


def build(sale: Sale) -> SampleRequest:
    at = sale.sent_at.isoformat(timespec="milliseconds")
    price = {"currency": sale.currency, "value": float(sale.value)}
    data: dict[str, Any] = {
        "id": sale.txid,
        "status": sale.status,
        "createdAt": at,
        "paymentMethod": "creditCard",
        "installments": 1,
        "price": price,
        "paid": price,
        "buyer": {"name": BUYER["name"], "email": BUYER["email"]},
        "items": [{"productId": "0", "name": PRODUCT, "price": price}],
        "utm": {"source": None, "medium": None, "campaign": None, "content": None},
        "tracker": {"code1": sale.click_id, "code2": None, "code3": None},
    }
    envelope = {
        "id": str(uuid5(NAMESPACE_URL, f"eduzz:{sale.txid}:{sale.event}")),
        "event": sale.event,
        "sentDate": at,
        "data": data,
    }
    request = json_request(envelope)
    if not sale.secret:
        return request
    signature = hmac.new(sale.secret.encode(), request.body, hashlib.sha256).hexdigest()
    return replace(request, headers=(*request.headers, (SIGNATURE_HEADER, signature)))


SAMPLE = Sample(by_status(WORDS), build)
