"""Eduzz webhook v3 (Developer Hub): a JSON envelope {id, event, sentDate, data}, events
`myeduzz.invoice_*`, signed with `x-signature` = HMAC-SHA256 of the raw body, the click id in
`data.tracker.code1`."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.postbacks.shop import (
    Shop,
    assert_log_keeps_no_secret,
    log_entries,
    only_conversion,
    open_shop,
    status_history,
)
from trilha.db.schema import conversions

WEBHOOK_SECRET = "9f2c7a1e5b8d4c3fa6e0b7d2c9a1f4e8"
INVOICE = "84219376"
ORIGIN_SECRET = "c0ffee00c0ffee00c0ffee00c0ffee00"

STATUSES = {
    "myeduzz.invoice_paid": "paid",
    "myeduzz.invoice_opened": "open",
    "myeduzz.invoice_waiting_payment": "waiting_payment",
    "myeduzz.invoice_canceled": "canceled",
    "myeduzz.invoice_refunded": "refunded",
    "myeduzz.invoice_waiting_refund": "waiting_refund",
    "myeduzz.invoice_chargeback": "chargeback",
}


def invoice(event: str, *, code1: str | None, value: float = 197.0) -> dict[str, Any]:
    """The envelope Eduzz posts for invoice INVOICE on ``event``."""
    price = {"currency": "BRL", "value": value}
    return {
        "id": f"01J0{event[-6:].upper()}QX7M2",
        "event": event,
        "sentDate": "2024-06-10T17:03:02.412Z",
        "data": {
            "id": INVOICE,
            "status": STATUSES.get(event, "unknown"),
            "transaction": {"id": "tr_5510293"},
            "createdAt": "2024-06-10T17:02:11.000Z",
            "dueDate": "2024-06-13T17:02:11.000Z",
            "paidAt": "2024-06-10T17:03:01.000Z" if event.endswith("paid") else None,
            "paymentMethod": "creditCard",
            "installments": 1,
            "price": price,
            "paid": price,
            "buyer": {
                "id": "7731882",
                "name": "Renata Alves",
                "email": "renata.alves@example.com",
                "document": "52998224725",
                "cellphone": "+5531987654321",
            },
            "producer": {"id": "1029384", "name": "Escola Online", "originSecret": ORIGIN_SECRET},
            "items": [{"productId": "1928374", "name": "Curso de Excel", "price": price}],
            "utm": {"source": "facebook", "medium": "cpc", "campaign": "excel", "content": "v3"},
            "tracker": {"code1": code1, "code2": None, "code3": None},
        },
    }


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


async def open_eduzz(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", WEBHOOK_SECRET)
    return await open_shop(
        client,
        db,
        preset="eduzz_v3",
        key="eduzz",
        offer_url="https://chk.eduzz.com/1928374?trk={click_id}",
        click_param="trk",
        **fields,
    )


async def deliver(
    client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any], *, signature: str | None = None
) -> httpx.Response:
    body = json.dumps(payload).encode()
    return await client.post(
        shop.url,
        params=shop.token,
        content=body,
        headers={
            "content-type": "application/json",
            "x-signature": signature if signature is not None else sign(body),
        },
    )


async def test_a_paid_invoice_is_a_sale_on_its_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    response = await deliver(client, shop, invoice("myeduzz.invoice_paid", code1=shop.click_id))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (INVOICE, "approved")
    [entry] = await log_entries(db)
    assert entry["details"]["platform_event"] == "myeduzz.invoice_paid"


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        ("myeduzz.invoice_paid", "approved"),
        ("myeduzz.invoice_opened", "pending"),
        ("myeduzz.invoice_waiting_payment", "pending"),
        ("myeduzz.invoice_canceled", "declined"),
        ("myeduzz.invoice_refunded", "refunded"),
        ("myeduzz.invoice_waiting_refund", "approved"),
        ("myeduzz.invoice_chargeback", "chargeback"),
    ],
)
async def test_each_invoice_event_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, expected: str
) -> None:
    shop = await open_eduzz(client, db)

    response = await deliver(client, shop, invoice(event, code1=shop.click_id))

    assert response.json()["conversion_status"] == expected
    assert (await only_conversion(db))["status"] == expected


async def test_payment_of_an_open_invoice_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    await deliver(client, shop, invoice("myeduzz.invoice_waiting_payment", code1=shop.click_id))
    paid = await deliver(client, shop, invoice("myeduzz.invoice_paid", code1=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(
    ("events", "final"),
    [
        (
            ("myeduzz.invoice_paid", "myeduzz.invoice_waiting_refund", "myeduzz.invoice_refunded"),
            "refunded",
        ),
        (("myeduzz.invoice_paid", "myeduzz.invoice_chargeback"), "chargeback"),
    ],
    ids=["refund", "chargeback"],
)
async def test_a_refund_or_chargeback_after_payment_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, events: tuple[str, ...], final: str
) -> None:
    shop = await open_eduzz(client, db)

    for event in events:
        await deliver(client, shop, invoice(event, code1=shop.click_id))

    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


@pytest.mark.parametrize("event", ["nutror.subscription_canceled", "sun.cart_abandonment"])
async def test_other_events_are_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, event: str
) -> None:
    shop = await open_eduzz(client, db)

    response = await deliver(client, shop, invoice(event, code1=shop.click_id))

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert await fetch_all(db, conversions) == []


async def test_the_click_id_falls_back_to_utm_content(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice("myeduzz.invoice_paid", code1=None)
    payload["data"]["utm"]["content"] = shop.click_id

    await deliver(client, shop, payload)

    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_a_sha256_prefixed_signature_is_accepted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice("myeduzz.invoice_paid", code1=shop.click_id)

    response = await deliver(
        client, shop, payload, signature="sha256=" + sign(json.dumps(payload).encode())
    )

    assert response.json()["status"] == "created"


@pytest.mark.parametrize(
    "signature_of",
    [lambda body: sign(body, "another-webhook-secret"), lambda body: ""],
    ids=["wrong", "missing"],
)
async def test_a_signature_that_does_not_match_the_body_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, signature_of: Any
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice("myeduzz.invoice_paid", code1=shop.click_id)

    response = await deliver(
        client, shop, payload, signature=signature_of(json.dumps(payload).encode())
    )

    assert response.status_code == 401
    assert response.json()["reason"] == "the signature does not match the body"
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)


async def test_the_signature_the_origin_secret_and_the_token_never_reach_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice("myeduzz.invoice_paid", code1=shop.click_id)

    await deliver(client, shop, payload)

    [entry] = await log_entries(db)
    assert entry["outcome"] == "created"
    await assert_log_keeps_no_secret(
        db,
        WEBHOOK_SECRET,
        ORIGIN_SECRET,
        sign(json.dumps(payload).encode()),
        shop.workspace.postback_token,
    )
