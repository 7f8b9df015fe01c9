"""Lastlink webhook: JSON `{Id, IsTest, Event, CreatedAt, Data}`, the event naming what happened,
the payment in `Data.Purchase` (reais), the click id in the checkout's `Data.Utm.Src`."""

from __future__ import annotations

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

# The token Lastlink shows beside each webhook (32 hexadecimal characters here).
TOKEN = "5e0b9c27a4d1f8e36b7a2c9d0f4e1b58"
PAYMENT_ID = "c3f9a1e2-7b4d-4e8a-9f06-2d5b8c1e7a93"
RENEWAL_ID = "8b2e6d14-0a9c-4f3b-b7e5-91c4d2a6f0e8"


def webhook(
    event: str, *, src: str | None, payment_id: str = PAYMENT_ID, price: float = 197.0
) -> dict[str, Any]:
    """What Lastlink posts on ``event`` for payment ``payment_id``."""
    return {
        "Id": "4d7e2a91-6c3b-48f0-a5d2-e19b7c0f3a64",
        "IsTest": False,
        "Event": event,
        "CreatedAt": "2025-03-18T14:22:05.512Z",
        "Data": {
            "Products": [{"Id": "e7c1b2a9", "Name": "Comunidade Fotografia"}],
            "Buyer": {
                "Id": "b91f",
                "Email": "camila.rocha@example.com",
                "Name": "Camila Rocha",
                "PhoneNumber": "+5548991234567",
                "Document": "11144477735",
            },
            "Seller": {"Id": "s-22", "Email": "produtor@example.com"},
            "Offer": {"Id": "o-7", "Name": "Mensal", "Url": "https://lastlink.com/p/C1A2B3/"},
            "Purchase": {
                "PaymentId": payment_id,
                "Recurrency": 2 if payment_id == RENEWAL_ID else 1,
                "PaymentDate": "2025-03-18T14:21:58.000Z",
                "OriginalPrice": {"Value": price},
                "Price": {"Value": price},
                "Payment": {"NumberOfInstallments": 1, "PaymentMethod": "CreditCard"},
            },
            "Subscriptions": [{"Id": "sub-19", "ProductId": "e7c1b2a9"}],
            "Utm": {
                "UtmSource": "instagram",
                "UtmMedium": "stories",
                "UtmCampaign": "fotografia",
                "UtmTerm": None,
                "UtmContent": None,
                "Src": src,
                "Sck": None,
            },
        },
    }


async def open_lastlink(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    return await open_shop(
        client,
        db,
        preset="lastlink",
        offer_url="https://lastlink.com/p/C1A2B3/checkout-payment?src={click_id}",
        click_param="src",
        **fields,
    )


async def deliver(
    client: httpx.AsyncClient,
    shop: Shop,
    payload: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, json=payload, headers=headers or {})


async def test_a_confirmed_order_is_a_sale_on_its_click_in_reais(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_lastlink(client, db)

    response = await deliver(client, shop, webhook("Purchase_Order_Confirmed", src=shop.click_id))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (PAYMENT_ID, "approved")


@pytest.mark.parametrize(
    ("event", "expected_event", "expected"),
    [
        ("Purchase_Order_Confirmed", "SALE", "approved"),
        ("Purchase_Request_Confirmed", "SALE", "pending"),
        ("Purchase_Request_Canceled", "SALE", "declined"),
        ("Purchase_Request_Expired", "SALE", "pending"),
        ("Payment_Refund", "SALE", "refunded"),
        ("Payment_Chargeback", "SALE", "chargeback"),
        ("Recurrent_Payment", "REBILL", "approved"),
        ("Subscription_Renewal_Pending", "REBILL", "pending"),
    ],
)
async def test_each_event_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, expected_event: str, expected: str
) -> None:
    shop = await open_lastlink(client, db)

    response = await deliver(client, shop, webhook(event, src=shop.click_id))

    assert (response.json()["event"], response.json()["conversion_status"]) == (
        expected_event,
        expected,
    )
    assert (await only_conversion(db))["status"] == expected


async def test_payment_of_the_pix_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_lastlink(client, db)

    await deliver(client, shop, webhook("Purchase_Request_Confirmed", src=shop.click_id))
    paid = await deliver(client, shop, webhook("Purchase_Order_Confirmed", src=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_an_overdue_renewal_paid_later_becomes_an_approved_rebill(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_lastlink(client, db)

    for event in ("Subscription_Renewal_Pending", "Recurrent_Payment"):
        last = await deliver(client, shop, webhook(event, src=shop.click_id, payment_id=RENEWAL_ID))

    assert (last.json()["status"], last.json()["event"]) == ("status_changed", "REBILL")
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(
    ("event", "final"), [("Payment_Refund", "refunded"), ("Payment_Chargeback", "chargeback")]
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, final: str
) -> None:
    shop = await open_lastlink(client, db)

    await deliver(client, shop, webhook("Purchase_Order_Confirmed", src=shop.click_id))
    await deliver(client, shop, webhook(event, src=shop.click_id))

    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


@pytest.mark.parametrize(
    "event",
    [
        "Subscription_Canceled",
        "Subscription_Expired",
        "Refund_Period_Over",
        "Refund_Requested",
        "Product_Access_Ended",
    ],
)
async def test_subscription_and_access_notices_leave_the_sale_counted(
    client: httpx.AsyncClient, db: AsyncEngine, event: str
) -> None:
    shop = await open_lastlink(client, db)

    await deliver(client, shop, webhook("Purchase_Order_Confirmed", src=shop.click_id))
    response = await deliver(client, shop, webhook(event, src=shop.click_id))

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert (await only_conversion(db))["status"] == "approved"


async def test_an_abandoned_cart_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_lastlink(client, db)
    payload = webhook("Abandoned_Cart", src=shop.click_id)
    del payload["Data"]["Purchase"]

    response = await deliver(client, shop, payload)

    assert (response.json()["status"], response.json()["event"]) == ("ignored", "LEAD")
    assert await fetch_all(db, conversions) == []


async def test_the_sck_is_read_when_there_is_no_src(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_lastlink(client, db)
    payload = webhook("Purchase_Order_Confirmed", src=None)
    payload["Data"]["Utm"]["Sck"] = shop.click_id

    await deliver(client, shop, payload)

    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_a_sale_without_src_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_lastlink(client, db)

    response = await deliver(client, shop, webhook("Purchase_Order_Confirmed", src=None))

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "no click id in the request (looked in: Data.Utm.Src, Data.Utm.Sck)"
    )


@pytest.mark.parametrize("header", ["x-lastlink-token", "x-webhook-token"])
async def test_with_a_secret_the_token_header_is_checked_and_never_logged(
    client: httpx.AsyncClient, db: AsyncEngine, header: str
) -> None:
    shop = await open_lastlink(client, db, secret=TOKEN)

    accepted = await deliver(
        client, shop, webhook("Purchase_Order_Confirmed", src=shop.click_id), {header: TOKEN}
    )

    assert accepted.json()["status"] == "created"
    await assert_log_keeps_no_secret(
        db, TOKEN, shop.workspace.postback_token, "camila.rocha@example.com", "11144477735"
    )


@pytest.mark.parametrize("sent", ["0" * 32, None], ids=["wrong", "missing"])
async def test_with_a_secret_a_wrong_or_missing_token_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, sent: str | None
) -> None:
    shop = await open_lastlink(client, db, secret=TOKEN)
    headers = {"x-lastlink-token": sent} if sent else {}

    response = await deliver(
        client, shop, webhook("Purchase_Order_Confirmed", src=shop.click_id), headers
    )

    assert response.status_code == 401
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)
