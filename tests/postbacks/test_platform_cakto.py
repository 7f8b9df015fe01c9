"""Cakto webhook: JSON {secret, event, data}, the event naming what happened, amounts in reais,
the click id in `data.sck`."""

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

SECRET = "8d1f4c2a-7b3e-4e59-a0c6-2f9b8e1d7a44"
ORDER_ID = "3c9e7a51-0b2d-4f8e-9a61-5d7c2b4e8f10"

STATUSES = {
    "purchase_approved": "paid",
    "boleto_gerado": "waiting_payment",
    "pix_gerado": "waiting_payment",
    "picpay_gerado": "waiting_payment",
    "purchase_refused": "refused",
    "refund": "refunded",
    "chargeback": "chargedback",
    "subscription_renewed": "paid",
}


def webhook(event: str, *, sck: str | None, amount: float = 197.0) -> dict[str, Any]:
    """What Cakto posts for order ORDER_ID on ``event``."""
    return {
        "secret": SECRET,
        "event": event,
        "data": {
            "id": ORDER_ID,
            "refId": "7kPz2Qx",
            "customer": {
                "name": "Juliana Prado",
                "birthDate": None,
                "email": "juliana.prado@example.com",
                "phone": "5521987650011",
                "docNumber": "15350946056",
            },
            "affiliate": "",
            "offer": {"id": "q8Lm3Zt", "name": "Método Leve", "price": amount},
            "offer_type": "main",
            "product": {
                "name": "Método Leve",
                "id": "prod-1",
                "short_id": "Ab3Cd4E",
                "type": "unique",
            },
            "checkoutUrl": None,
            "status": STATUSES.get(event, "scheduled"),
            "baseAmount": amount,
            "discount": None,
            "amount": amount,
            "commissions": [
                {
                    "user": "produtora@example.com",
                    "totalAmount": 180.45,
                    "percentage": 100,
                    "type": "producer",
                }
            ],
            "fees": 16.55,
            "paymentMethod": "pix" if event == "pix_gerado" else "credit_card",
            "installments": 1,
            "utm_source": "facebook",
            "utm_medium": "cpc",
            "utm_campaign": "metodo-leve",
            "utm_term": None,
            "utm_content": None,
            "sck": sck,
            "fbc": None,
            "fbp": None,
            "paidAt": "2025-04-08T14:43:43-03:00" if event == "purchase_approved" else None,
            "createdAt": "2025-04-08T14:41:42-03:00",
        },
    }


async def open_cakto(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", SECRET)
    return await open_shop(
        client,
        db,
        preset="cakto",
        offer_url="https://pay.cakto.com.br/q8Lm3Zt?sck={click_id}&utm_source=facebook",
        click_param="sck",
        **fields,
    )


async def deliver(client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any]) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, json=payload)


async def test_an_approved_purchase_is_a_sale_on_its_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_cakto(client, db)

    response = await deliver(client, shop, webhook("purchase_approved", sck=shop.click_id))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (ORDER_ID, "approved")


@pytest.mark.parametrize(
    ("event", "expected_event", "expected"),
    [
        ("purchase_approved", "SALE", "approved"),
        ("boleto_gerado", "SALE", "pending"),
        ("pix_gerado", "SALE", "pending"),
        ("picpay_gerado", "SALE", "pending"),
        ("purchase_refused", "SALE", "declined"),
        ("refund", "SALE", "refunded"),
        ("chargeback", "SALE", "chargeback"),
        ("subscription_renewed", "REBILL", "approved"),
    ],
)
async def test_each_event_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, expected_event: str, expected: str
) -> None:
    shop = await open_cakto(client, db)

    response = await deliver(client, shop, webhook(event, sck=shop.click_id))

    assert (response.json()["event"], response.json()["conversion_status"]) == (
        expected_event,
        expected,
    )
    assert (await only_conversion(db))["status"] == expected


async def test_payment_of_the_pix_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_cakto(client, db)

    await deliver(client, shop, webhook("pix_gerado", sck=shop.click_id))
    paid = await deliver(client, shop, webhook("purchase_approved", sck=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(("event", "final"), [("refund", "refunded"), ("chargeback", "chargeback")])
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, final: str
) -> None:
    shop = await open_cakto(client, db)

    await deliver(client, shop, webhook("purchase_approved", sck=shop.click_id))
    await deliver(client, shop, webhook(event, sck=shop.click_id))

    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


@pytest.mark.parametrize("event", ["checkout_abandonment", "subscription_canceled"])
async def test_an_abandoned_checkout_or_a_cancelled_subscription_is_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, event: str
) -> None:
    shop = await open_cakto(client, db)

    response = await deliver(client, shop, webhook(event, sck=shop.click_id))

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert await fetch_all(db, conversions) == []


async def test_net_value_is_the_producers_commission(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_cakto(client, db, value_choice="net")

    await deliver(client, shop, webhook("purchase_approved", sck=shop.click_id))

    assert (await only_conversion(db))["value_minor"] == 18045


async def test_a_sale_without_sck_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_cakto(client, db)

    response = await deliver(client, shop, webhook("purchase_approved", sck=None))

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "no click id in the request (looked in: data.sck, data.utm_content)"
    )


@pytest.mark.parametrize("secret", ["00000000-0000-0000-0000-000000000000", None])
async def test_a_wrong_or_missing_secret_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, secret: str | None
) -> None:
    shop = await open_cakto(client, db)
    payload = webhook("purchase_approved", sck=shop.click_id)
    payload["secret"] = secret

    response = await deliver(client, shop, payload)

    assert response.status_code == 401
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)


async def test_the_secret_the_buyer_and_the_token_never_reach_the_log_in_clear(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_cakto(client, db)

    await deliver(client, shop, webhook("purchase_approved", sck=shop.click_id))

    [entry] = await log_entries(db)
    assert entry["outcome"] == "created"
    await assert_log_keeps_no_secret(
        db, SECRET, shop.workspace.postback_token, "juliana.prado@example.com", "15350946056"
    )
