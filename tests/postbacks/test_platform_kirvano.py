"""Kirvano webhook: JSON naming the event (`SALE_APPROVED`, ...), the sale in `sale_id`, the
amount as text (`"R$ 197,00"`), the click id in `utm.src`, the panel's token in a header."""

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

# Kirvano lets the producer type the webhook's token; this is one a producer would type.
TOKEN = "kirvano-8f3b2c7d41e9"
SALE_ID = "f2b7c1d4-93ae-4d0b-8c6e-5a1f7e2d9b30"

STATUSES = {
    "SALE_APPROVED": "APPROVED",
    "PIX_GENERATED": "PENDING",
    "BANK_SLIP_GENERATED": "PENDING",
    "SALE_REFUSED": "REFUSED",
    "PIX_EXPIRED": "CANCELED",
    "BANK_SLIP_EXPIRED": "CANCELED",
    "SALE_REFUNDED": "REFUNDED",
    "SALE_CHARGEBACK": "CHARGEBACK",
    "SUBSCRIPTION_RENEWED": "APPROVED",
    "SUBSCRIPTION_EXPIRED": "PENDING",
    "SUBSCRIPTION_CANCELED": "CANCELED",
    "ABANDONED_CART": "ABANDONED_CART",
}


def webhook(
    event: str, *, src: str | None, total: str = "R$ 197,00", sale_id: str = SALE_ID
) -> dict[str, Any]:
    """What Kirvano posts for sale ``sale_id`` on ``event``."""
    recurring = event.startswith("SUBSCRIPTION_")
    return {
        "event": event,
        "event_description": "Venda aprovada" if event == "SALE_APPROVED" else event.title(),
        "checkout_id": "0c1e4b8a-2f6d-4c3e-9a7b-1d5e8f2a6c40",
        "sale_id": sale_id,
        "payment_method": "PIX" if event.startswith("PIX_") else "CREDIT_CARD",
        "total_price": total,
        "type": "RECURRING" if recurring else "ONE_TIME",
        "status": STATUSES[event],
        "created_at": "2025-05-12 09:41:07",
        "fiscal": {"total_value": 197.0, "net_value": 181.43, "fee": 15.57},
        "customer": {
            "name": "Renata Moura",
            "document": "52998224725",
            "email": "renata.moura@example.com",
            "phone_number": "5531988776655",
        },
        "payment": {"method": "CREDIT_CARD", "brand": "VISA", "installments": 1},
        "plan": (
            {
                "name": "Mensal",
                "charge_frequency": "MONTHLY",
                "next_charge_date": "2025-06-12 09:41:07",
            }
            if recurring
            else None
        ),
        "products": [
            {
                "id": "7d3a9c21-5b8e-4f60-a2c4-9e1b6d7f3a58",
                "name": "Curso Receitas Fit",
                "offer_id": "b1e6",
                "price": total,
                "is_order_bump": False,
            }
        ],
        "utm": {
            "src": src,
            "utm_source": "facebook",
            "utm_medium": "cpc",
            "utm_campaign": "receitas-fit",
            "utm_term": None,
            "utm_content": None,
        },
    }


async def open_kirvano(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    return await open_shop(
        client,
        db,
        preset="kirvano",
        offer_url="https://pay.kirvano.com/0c1e4b8a?src={click_id}&utm_source=facebook",
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


async def test_an_approved_sale_is_a_sale_on_its_click_with_the_text_amount_read(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)

    response = await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (SALE_ID, "approved")


async def test_an_amount_in_thousands_is_read_as_written(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)

    await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id, total="R$ 1.497,90"))

    assert (await only_conversion(db))["value_minor"] == 149790


@pytest.mark.parametrize(
    ("event", "expected_event", "expected"),
    [
        ("SALE_APPROVED", "SALE", "approved"),
        ("PIX_GENERATED", "SALE", "pending"),
        ("BANK_SLIP_GENERATED", "SALE", "pending"),
        ("SALE_REFUSED", "SALE", "declined"),
        ("PIX_EXPIRED", "SALE", "pending"),
        ("BANK_SLIP_EXPIRED", "SALE", "pending"),
        ("SALE_REFUNDED", "SALE", "refunded"),
        ("SALE_CHARGEBACK", "SALE", "chargeback"),
        ("SUBSCRIPTION_RENEWED", "REBILL", "approved"),
        ("SUBSCRIPTION_EXPIRED", "REBILL", "pending"),
    ],
)
async def test_each_event_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, expected_event: str, expected: str
) -> None:
    shop = await open_kirvano(client, db)

    response = await deliver(client, shop, webhook(event, src=shop.click_id))

    assert (response.json()["event"], response.json()["conversion_status"]) == (
        expected_event,
        expected,
    )
    assert (await only_conversion(db))["status"] == expected


async def test_payment_of_the_pix_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)

    await deliver(client, shop, webhook("PIX_GENERATED", src=shop.click_id))
    paid = await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_a_late_renewal_paid_later_becomes_an_approved_rebill(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)
    renewal = "a9d4e6f1-0c2b-4e7a-8d35-6b1f9c2e7d04"

    await deliver(client, shop, webhook("SUBSCRIPTION_EXPIRED", src=shop.click_id, sale_id=renewal))
    paid = await deliver(
        client, shop, webhook("SUBSCRIPTION_RENEWED", src=shop.click_id, sale_id=renewal)
    )

    assert (paid.json()["status"], paid.json()["event"]) == ("status_changed", "REBILL")
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(
    ("event", "final"), [("SALE_REFUNDED", "refunded"), ("SALE_CHARGEBACK", "chargeback")]
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, final: str
) -> None:
    shop = await open_kirvano(client, db)

    await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id))
    await deliver(client, shop, webhook(event, src=shop.click_id))

    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


async def test_a_cancelled_subscription_leaves_the_first_sale_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)

    await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id))
    response = await deliver(client, shop, webhook("SUBSCRIPTION_CANCELED", src=shop.click_id))

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert (await only_conversion(db))["status"] == "approved"


async def test_an_abandoned_cart_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)

    response = await deliver(client, shop, webhook("ABANDONED_CART", src=shop.click_id))

    assert (response.json()["status"], response.json()["event"]) == ("ignored", "LEAD")
    assert await fetch_all(db, conversions) == []


async def test_net_value_is_the_fiscal_net_value(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db, value_choice="net")

    await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id))

    assert (await only_conversion(db))["value_minor"] == 18143


async def test_a_sale_without_src_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)

    response = await deliver(client, shop, webhook("SALE_APPROVED", src=None))

    assert response.status_code == 400
    assert response.json()["reason"] == "no click id in the request (looked in: utm.src, utm.sck)"


@pytest.mark.parametrize("header", ["security-token", "x-kirvano-token"])
async def test_the_token_is_accepted_in_either_header_and_never_reaches_the_log(
    client: httpx.AsyncClient, db: AsyncEngine, header: str
) -> None:
    shop = await open_kirvano(client, db, secret=TOKEN)

    response = await deliver(
        client, shop, webhook("SALE_APPROVED", src=shop.click_id), {header: TOKEN}
    )

    assert response.json()["status"] == "created"
    await assert_log_keeps_no_secret(
        db, TOKEN, shop.workspace.postback_token, "renata.moura@example.com", "52998224725"
    )


@pytest.mark.parametrize("sent", ["kirvano-0000000000000", None], ids=["wrong", "missing"])
async def test_with_a_secret_a_wrong_or_missing_token_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, sent: str | None
) -> None:
    shop = await open_kirvano(client, db, secret=TOKEN)
    headers = {"security-token": sent} if sent else {}

    response = await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id), headers)

    assert response.status_code == 401
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)


async def test_without_a_secret_a_delivery_without_token_is_accepted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kirvano(client, db)

    response = await deliver(client, shop, webhook("SALE_APPROVED", src=shop.click_id))

    assert response.json()["status"] == "created"
