"""Greenn webhook: JSON `saleUpdated` events, the status in `currentStatus` (`sale.status` when
absent), the sale's id in `sale.id`, the click id in the `saleMetas` list."""

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

WEBHOOK_TOKEN = "gr33nn-7c1e9a4b2d8f6e0a3c5b"
SALE_ID = 482913


def sale_updated(
    status: str,
    *,
    metas: dict[str, str | None],
    old: str | None = None,
    event: str = "saleUpdated",
    amount: float = 197.0,
) -> dict[str, Any]:
    """What Greenn posts when sale SALE_ID turns ``status``."""
    return {
        "type": "sale",
        "event": event,
        "oldStatus": old,
        "currentStatus": status,
        "sale": {
            "id": SALE_ID,
            "status": status,
            "method": "PIX" if status == "waiting_payment" else "CREDIT_CARD",
            "amount": amount,
            "installments": 1,
            "type": "TRANSACTION",
            "coupon": None,
            "created_at": "2024-06-10 14:02:11",
        },
        "product": {
            "id": 77120,
            "name": "Mentoria Vendas",
            "amount": amount,
            "type": "TRANSACTION",
        },
        "client": {
            "id": 991823,
            "name": "Paulo Nogueira",
            "email": "paulo.nogueira@example.com",
            "cellphone": "+5511976543210",
            "document": "39053344705",
        },
        "seller": {"id": 5521, "name": "Escola de Vendas"},
        "saleMetas": [{"meta_key": key, "meta_value": value} for key, value in metas.items()],
        "productMetas": [],
    }


async def open_greenn(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    return await open_shop(
        client,
        db,
        preset="greenn",
        offer_url="https://payfast.greenn.com.br/77120?src={click_id}&utm_source=facebook",
        click_param="src",
        **fields,
    )


async def deliver(
    client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any], token: str | None = None
) -> httpx.Response:
    headers = {"x-greenn-token": token} if token else {}
    return await client.post(shop.url, params=shop.token, json=payload, headers=headers)


def metas(click_id: str) -> dict[str, str | None]:
    return {"utm_source": "facebook", "utm_campaign": "mentoria", "src": click_id}


async def test_a_paid_sale_is_a_sale_on_its_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_greenn(client, db)

    response = await deliver(client, shop, sale_updated("paid", metas=metas(shop.click_id)))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (str(SALE_ID), "approved")


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("paid", "approved"),
        ("waiting_payment", "pending"),
        ("refused", "declined"),
        ("canceled", "declined"),
        ("refunded", "refunded"),
        ("chargedback", "chargeback"),
    ],
)
async def test_each_status_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, status: str, expected: str
) -> None:
    shop = await open_greenn(client, db)

    response = await deliver(client, shop, sale_updated(status, metas=metas(shop.click_id)))

    assert response.json()["conversion_status"] == expected
    assert (await only_conversion(db))["status"] == expected


async def test_the_sales_status_is_read_when_current_status_is_missing(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_greenn(client, db)
    payload = sale_updated("paid", metas=metas(shop.click_id))
    del payload["currentStatus"]

    response = await deliver(client, shop, payload)

    assert response.json()["conversion_status"] == "approved"


async def test_payment_of_the_pix_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_greenn(client, db)

    await deliver(client, shop, sale_updated("waiting_payment", metas=metas(shop.click_id)))
    paid = await deliver(
        client, shop, sale_updated("paid", old="waiting_payment", metas=metas(shop.click_id))
    )

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(
    ("status", "final"), [("refunded", "refunded"), ("chargedback", "chargeback")]
)
async def test_a_refund_or_chargeback_after_payment_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, status: str, final: str
) -> None:
    shop = await open_greenn(client, db)

    await deliver(client, shop, sale_updated("paid", metas=metas(shop.click_id)))
    await deliver(client, shop, sale_updated(status, old="paid", metas=metas(shop.click_id)))

    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


@pytest.mark.parametrize(
    ("event", "expected_event"), [("checkoutAbandoned", "LEAD"), ("contractUpdated", "SALE")]
)
async def test_an_abandoned_checkout_or_a_contract_change_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, expected_event: str
) -> None:
    shop = await open_greenn(client, db)

    response = await deliver(
        client, shop, sale_updated("paid", event=event, metas=metas(shop.click_id))
    )

    assert (response.json()["status"], response.json()["event"]) == ("ignored", expected_event)
    assert await fetch_all(db, conversions) == []


@pytest.mark.parametrize("key", ["src", "sck", "xcod"])
async def test_the_click_id_is_read_from_the_sale_metas(
    client: httpx.AsyncClient, db: AsyncEngine, key: str
) -> None:
    shop = await open_greenn(client, db)

    await deliver(
        client, shop, sale_updated("paid", metas={"utm_source": "fb", key: shop.click_id})
    )

    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_a_sale_without_tracking_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_greenn(client, db)

    response = await deliver(client, shop, sale_updated("paid", metas={"utm_source": "fb"}))

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "no click id in the request (looked in: sale_meta.src, sale_meta.sck, sale_meta.xcod)"
    )


@pytest.mark.parametrize("token", ["wrong-token-0123456789", None], ids=["wrong", "missing"])
async def test_with_a_secret_a_wrong_or_missing_token_header_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, token: str | None
) -> None:
    shop = await open_greenn(client, db, secret=WEBHOOK_TOKEN)

    response = await deliver(client, shop, sale_updated("paid", metas=metas(shop.click_id)), token)

    assert response.status_code == 401
    assert await fetch_all(db, conversions) == []


async def test_the_token_header_is_accepted_and_never_reaches_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_greenn(client, db, secret=WEBHOOK_TOKEN)

    response = await deliver(
        client, shop, sale_updated("paid", metas=metas(shop.click_id)), WEBHOOK_TOKEN
    )

    assert response.json()["status"] == "created"
    [entry] = await log_entries(db)
    assert entry["outcome"] == "created"
    await assert_log_keeps_no_secret(db, WEBHOOK_TOKEN, shop.workspace.postback_token)
