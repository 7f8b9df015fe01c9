"""Payt postback (PayT V1): JSON of the order with the `status` that sent it, the sale in
`transaction_id`, amounts in cents, the click id in `link.sources.src`, the account's
`integration_key` in the body."""

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

# Payt's integration key: 32 hexadecimal characters.
INTEGRATION_KEY = "b4733515ee4806fea4f2189f168f3a77"
TRANSACTION_ID = "R3NYZR"
RENEWAL_ID = "K8QWPD"


def postback(
    status: str,
    *,
    src: str | None,
    transaction_id: str = TRANSACTION_ID,
    key: str | None = INTEGRATION_KEY,
) -> dict[str, Any]:
    """What Payt posts for transaction ``transaction_id`` when it turns ``status``."""
    subscription = status.startswith("subscription_")
    return {
        "integration_key": key,
        "cart_id": "RW3NPR",
        "started_at": "2025-07-10 13:59:46",
        "updated_at": "2025-07-10 14:00:17",
        "seller_id": "AR6D4X",
        "test": False,
        "status": status,
        "type": "abandoned-cart" if status == "lost_cart" else "order",
        "tangible": False,
        "transaction_id": transaction_id,
        "customer": {
            "name": "Larissa Campos",
            "fake_email": False,
            "email": "larissa.campos@example.com",
            "doc": "67415765095",
            "phone": "+5541999887766",
        },
        "product": {
            "code": "9RKD4M",
            "type": "digital",
            "name": "Curso Excel Pro",
            "quantity": 1,
            "price": 19700,
        },
        "link": {
            "title": "Curso Excel Pro",
            "url": "https://checkout.payt.com.br/f457c545",
            "sources": {"utm_source": "facebook", "utm_campaign": "excel", "src": src},
        },
        "transaction": {
            "created_at": "2025-07-10 14:00:17",
            "payment_method": "credit_card",
            "payment_status": "paid" if status == "paid" else "pending",
            "total_price": 19700,
            "quantity": 1,
            "installments": 1,
        },
        "commission": [
            {"name": "PAYT", "type": "platform", "amount": 1850},
            {"name": "Produtora", "type": "producer", "amount": 17850},
        ],
        "subscription": {"code": "SB1", "charges": 2, "status": "active"} if subscription else None,
    }


async def open_payt(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", INTEGRATION_KEY)
    return await open_shop(
        client,
        db,
        preset="payt",
        offer_url="https://checkout.payt.com.br/f457c545?src={click_id}&utm_source=facebook",
        click_param="src",
        **fields,
    )


async def deliver(client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any]) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, json=payload)


async def test_a_paid_order_is_a_sale_on_its_click_in_reais(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db)

    response = await deliver(client, shop, postback("paid", src=shop.click_id))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (TRANSACTION_ID, "approved")


@pytest.mark.parametrize(
    ("status", "expected_event", "expected"),
    [
        ("paid", "SALE", "approved"),
        ("billed", "SALE", "approved"),
        ("shipped", "SALE", "approved"),
        ("waiting_payment", "SALE", "pending"),
        ("cancelled", "SALE", "declined"),
        ("refunded", "SALE", "refunded"),
        ("chargeback", "SALE", "chargeback"),
        ("subscription_renewed", "REBILL", "approved"),
        ("subscription_overdue", "REBILL", "pending"),
    ],
)
async def test_each_status_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, status: str, expected_event: str, expected: str
) -> None:
    shop = await open_payt(client, db)

    response = await deliver(client, shop, postback(status, src=shop.click_id))

    assert (response.json()["event"], response.json()["conversion_status"]) == (
        expected_event,
        expected,
    )
    assert (await only_conversion(db))["status"] == expected


async def test_payment_of_the_boleto_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db)

    await deliver(client, shop, postback("waiting_payment", src=shop.click_id))
    paid = await deliver(client, shop, postback("paid", src=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_an_overdue_renewal_paid_later_becomes_an_approved_rebill(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db)

    for status in ("subscription_overdue", "subscription_renewed"):
        last = await deliver(
            client, shop, postback(status, src=shop.click_id, transaction_id=RENEWAL_ID)
        )

    assert (last.json()["status"], last.json()["event"]) == ("status_changed", "REBILL")
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_the_later_steps_of_a_physical_order_count_it_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db)

    for status in ("paid", "billed", "separation", "shipping", "shipped"):
        last = await deliver(client, shop, postback(status, src=shop.click_id))

    assert last.json()["status"] == "duplicate"
    assert (await only_conversion(db))["status"] == "approved"


@pytest.mark.parametrize("status", ["subscription_activated", "subscription_canceled"])
async def test_a_subscriptions_activation_or_cancellation_leaves_the_sale_as_it_was(
    client: httpx.AsyncClient, db: AsyncEngine, status: str
) -> None:
    shop = await open_payt(client, db)

    await deliver(client, shop, postback("paid", src=shop.click_id))
    response = await deliver(client, shop, postback(status, src=shop.click_id))

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert (await only_conversion(db))["status"] == "approved"


async def test_a_lost_cart_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db)

    response = await deliver(client, shop, postback("lost_cart", src=shop.click_id))

    assert (response.json()["status"], response.json()["event"]) == ("ignored", "LEAD")
    assert await fetch_all(db, conversions) == []


async def test_net_value_is_the_producers_commission(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db, value_choice="net")

    await deliver(client, shop, postback("paid", src=shop.click_id))

    assert (await only_conversion(db))["value_minor"] == 17850


async def test_a_sale_without_src_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db)

    response = await deliver(client, shop, postback("paid", src=None))

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "no click id in the request (looked in: link.sources.src, link.sources.sck, "
        "link.query_params.src)"
    )


@pytest.mark.parametrize("key", ["0" * 32, None], ids=["wrong", "missing"])
async def test_a_wrong_or_missing_integration_key_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, key: str | None
) -> None:
    shop = await open_payt(client, db)

    response = await deliver(client, shop, postback("paid", src=shop.click_id, key=key))

    assert response.status_code == 401
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)


async def test_the_key_the_buyer_and_the_token_never_reach_the_log_in_clear(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_payt(client, db)

    await deliver(client, shop, postback("paid", src=shop.click_id))

    [entry] = await log_entries(db)
    assert entry["outcome"] == "created"
    await assert_log_keeps_no_secret(
        db,
        INTEGRATION_KEY,
        shop.workspace.postback_token,
        "larissa.campos@example.com",
        "67415765095",
    )
