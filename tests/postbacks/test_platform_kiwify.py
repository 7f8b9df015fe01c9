"""Kiwify webhooks: JSON orders in cents, signed with ?signature= HMAC-SHA1 of the raw body."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
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

WEBHOOK_TOKEN = "k7wq2m9x4rtzb5n8"  # shown in Kiwify's panel; never sent in the request
ORDER_ID = "9c1f6b2e-5d4a-4f3b-8e7c-1a2b3c4d5e6f"


def order(
    event: str | None,
    status: str,
    *,
    tracking: Mapping[str, str | None],
    order_id: str = ORDER_ID,
    charge_amount: int = 19700,
    payment_method: str = "credit_card",
) -> dict[str, Any]:
    """An order webhook as Kiwify posts it: amounts in cents, dates without a zone."""
    paid = status == "paid"
    return {
        "order_id": order_id,
        "order_ref": "Xk2LpQ9",
        "order_status": status,
        "product_type": "membership",
        "payment_method": payment_method,
        "store_id": "sFq1lT9b2cW8",
        "payment_merchant_id": 48213,
        "installments": 1,
        "card_type": "mastercard" if payment_method == "credit_card" else None,
        "card_last4digits": "4242" if payment_method == "credit_card" else None,
        "card_rejection_reason": None,
        "boleto_URL": "https://boleto.example/2x9" if payment_method == "boleto" else None,
        "boleto_barcode": "23793381286000000004252000063308793400000019700"
        if payment_method == "boleto"
        else None,
        "boleto_expiry_date": "2024-06-13" if payment_method == "boleto" else None,
        "pix_code": "00020126580014br.gov.bcb.pix" if payment_method == "pix" else None,
        "pix_expiration": "2024-06-10 15:02" if payment_method == "pix" else None,
        "sale_type": "producer",
        "created_at": "2024-06-10 14:02",
        "updated_at": "2024-06-10 14:03",
        "approved_date": "2024-06-10 14:03" if paid else None,
        "refunded_at": None,
        "webhook_event_type": event,
        "Product": {
            "product_id": "3f2e1d0c-9b8a-4765-a4b3-c2d1e0f9a8b7",
            "product_name": "Horta em Casa: do vaso à colheita",
        },
        "Customer": {
            "full_name": "Rafael Nogueira",
            "first_name": "Rafael",
            "email": "rafael.nogueira@example.com",
            "mobile": "+5531991234567",
            "CPF": "52998224725",
            "ip": "177.92.10.4",
            "instagram": None,
            "street": "Rua da Bahia",
            "number": "1148",
            "complement": "",
            "neighborhood": "Centro",
            "city": "Belo Horizonte",
            "state": "MG",
            "zipcode": "30160-011",
        },
        "Commissions": {
            "charge_amount": charge_amount,
            "product_base_price": charge_amount,
            "product_base_price_currency": "BRL",
            "kiwify_fee": 1890,
            "kiwify_fee_currency": "BRL",
            "settlement_amount": charge_amount - 1890,
            "settlement_amount_currency": "BRL",
            "sale_tax_rate": 0,
            "sale_tax_amount": 0,
            "currency": "BRL",
            "my_commission": charge_amount - 1890,
            "funds_status": None,
            "estimated_deposit_date": None,
            "deposit_date": None,
            "commissioned_stores": [
                {
                    "id": "sFq1lT9b2cW8",
                    "type": "producer",
                    "custom_name": "Horta em Casa",
                    "email": "contato@hortaemcasa.example",
                    "value": str(charge_amount - 1890),
                }
            ],
        },
        "TrackingParameters": {
            "src": None,
            "sck": None,
            "utm_source": "facebook",
            "utm_medium": "cpc",
            "utm_campaign": "horta-junho",
            "utm_content": "video-3",
            "utm_term": None,
            "s1": None,
            "s2": None,
            "s3": None,
            **tracking,
        },
        "subscription_id": None,
        "Subscription": None,
        "access_url": None,
    }


def sign(body: bytes, token: str = WEBHOOK_TOKEN) -> str:
    return hmac.new(token.encode(), body, hashlib.sha1).hexdigest()


async def open_kiwify(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", WEBHOOK_TOKEN)
    return await open_shop(
        client,
        db,
        preset="kiwify",
        offer_url="https://pay.kiwify.com.br/Xk2LpQ9?sck={click_id}&utm_source=facebook",
        click_param="sck",
        **fields,
    )


async def deliver(
    client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any], *, signature: str | None = None
) -> httpx.Response:
    """POST as Kiwify does: the JSON body, and its signature appended to the URL."""
    body = json.dumps(payload).encode()
    params = {**shop.token, "signature": signature if signature is not None else sign(body)}
    return await client.post(
        shop.url, params=params, content=body, headers={"content-type": "application/json"}
    )


def approved(shop: Shop, **overrides: Any) -> dict[str, Any]:
    return order("order_approved", "paid", tracking={"sck": shop.click_id}, **overrides)


@pytest.mark.parametrize(("cents", "value_minor"), [(19700, 19700), (990, 990), (149790, 149790)])
async def test_an_approved_order_is_a_sale_with_its_amount_read_in_cents(
    client: httpx.AsyncClient, db: AsyncEngine, cents: int, value_minor: int
) -> None:
    shop = await open_kiwify(client, db)

    response = await deliver(client, shop, approved(shop, charge_amount=cents))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (value_minor, "BRL")
    assert (conversion["txid"], conversion["status"]) == (ORDER_ID, "approved")
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["conversion_id"]) == ("created", conversion["id"])


@pytest.mark.parametrize(
    ("event", "method"), [("billet_created", "boleto"), ("pix_created", "pix")]
)
async def test_a_generated_boleto_or_pix_is_pending_not_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, method: str
) -> None:
    shop = await open_kiwify(client, db)
    payload = order(
        event, "waiting_payment", tracking={"sck": shop.click_id}, payment_method=method
    )

    response = await deliver(client, shop, payload)

    assert response.json()["conversion_status"] == "pending"
    assert (await only_conversion(db))["status"] == "pending"


async def test_payment_of_the_pix_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    tracking = {"sck": shop.click_id}

    await deliver(client, shop, order("pix_created", "waiting_payment", tracking=tracking))
    paid = await deliver(client, shop, approved(shop, payment_method="pix"))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert (conversion["status"], conversion["value_minor"]) == ("approved", 19700)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(
    ("event", "status", "final"),
    [("order_refunded", "refunded", "refunded"), ("chargeback", "chargedback", "chargeback")],
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, status: str, final: str
) -> None:
    shop = await open_kiwify(client, db)

    await deliver(client, shop, approved(shop))
    response = await deliver(client, shop, order(event, status, tracking={"sck": shop.click_id}))

    assert response.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert conversion["status"] == final
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


async def test_a_repeated_approval_is_a_duplicate(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)

    first = await deliver(client, shop, approved(shop))
    again = await deliver(client, shop, approved(shop))

    assert [first.json()["status"], again.json()["status"]] == ["created", "duplicate"]
    assert again.json()["conversion_id"] == first.json()["conversion_id"]
    assert len(await fetch_all(db, conversions)) == 1


async def test_a_refused_card_is_recorded_as_declined(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    payload = order("order_rejected", "refused", tracking={"sck": shop.click_id})
    payload["card_rejection_reason"] = "insufficient_funds"

    response = await deliver(client, shop, payload)

    assert response.json()["conversion_status"] == "declined"


async def test_a_renewal_is_a_rebill_counted_once_whichever_webhook_names_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    renewal_id = "0d9e8f7a-6b5c-4d3e-9f1a-2b3c4d5e6f70"
    renewal = order(
        "subscription_renewed", "paid", tracking={"sck": shop.click_id}, order_id=renewal_id
    )
    renewal["subscription_id"] = "sub_7a6b5c4d"
    renewal["Subscription"] = {"id": "sub_7a6b5c4d", "status": "active", "plan": {"name": "Anual"}}

    await deliver(client, shop, approved(shop))
    renewed = await deliver(client, shop, renewal)
    purchase_event = await deliver(client, shop, approved(shop, order_id=renewal_id))

    assert (renewed.json()["status"], renewed.json()["event"]) == ("created", "REBILL")
    assert purchase_event.json()["status"] == "duplicate"
    types = {c["txid"]: c["event_type"] for c in await fetch_all(db, conversions)}
    assert types == {ORDER_ID: "SALE", renewal_id: "REBILL"}


async def test_a_cancelled_subscription_is_logged_and_changes_nothing(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    await deliver(client, shop, approved(shop))

    response = await deliver(
        client, shop, order("subscription_canceled", "paid", tracking={"sck": shop.click_id})
    )

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert (await only_conversion(db))["status"] == "approved"


async def test_an_overdue_renewal_is_a_pending_rebill_that_counts_when_paid(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    renewal_id = "5e4d3c2b-1a09-4f8e-8d7c-6b5a4f3e2d1c"
    tracking = {"sck": shop.click_id}
    await deliver(client, shop, approved(shop))

    late = await deliver(
        client,
        shop,
        order("subscription_late", "waiting_payment", tracking=tracking, order_id=renewal_id),
    )
    renewed = await deliver(
        client, shop, order("subscription_renewed", "paid", tracking=tracking, order_id=renewal_id)
    )

    assert (late.json()["status"], late.json()["event"]) == ("created", "REBILL")
    assert late.json()["conversion_status"] == "pending"
    assert renewed.json()["status"] == "status_changed"
    found = {c["txid"]: (c["event_type"], c["status"]) for c in await fetch_all(db, conversions)}
    assert found == {ORDER_ID: ("SALE", "approved"), renewal_id: ("REBILL", "approved")}


async def test_an_abandoned_cart_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    cart = {
        "id": "4b3a2c1d-0e9f-4a8b-b7c6-d5e4f3a2b1c0",
        "checkout_link": f"https://pay.kiwify.com.br/Xk2LpQ9?sck={shop.click_id}",
        "country": "BR",
        "created_at": "2024-06-10 13:58",
        "email": "visitante@example.com",
        "name": "Paula Visitante",
        "phone": "+5521998765432",
        "cnpj": None,
        "offer_name": None,
        "product_id": "3f2e1d0c-9b8a-4765-a4b3-c2d1e0f9a8b7",
        "product_name": "Horta em Casa: do vaso à colheita",
        "status": "abandoned",
        "store_id": "sFq1lT9b2cW8",
        "subscription_plan": None,
    }

    response = await deliver(client, shop, cart)

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("ignored", "LEAD")
    assert await fetch_all(db, conversions) == []


@pytest.mark.parametrize(
    "tracking_of",
    [
        lambda click: {"sck": click, "src": "fb-feed"},
        lambda click: {"src": click},
        lambda click: {"s1": click},
    ],
    ids=["sck", "src", "s1"],
)
async def test_the_click_id_is_read_from_sck_then_src_then_s1(
    client: httpx.AsyncClient, db: AsyncEngine, tracking_of: Any
) -> None:
    shop = await open_kiwify(client, db)

    await deliver(
        client, shop, order("order_approved", "paid", tracking=tracking_of(shop.click_id))
    )

    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_net_value_is_my_commission_in_cents(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db, value_choice="net")

    await deliver(client, shop, approved(shop))

    assert (await only_conversion(db))["value_minor"] == 17810


async def test_an_order_wrapped_in_an_order_object_reads_the_same(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)

    response = await deliver(client, shop, {"order": approved(shop)})

    assert response.json()["status"] == "created"
    conversion = await only_conversion(db)
    assert (conversion["txid"], conversion["value_minor"]) == (ORDER_ID, 19700)


async def test_kiwifys_test_webhook_without_tracking_is_logged_with_the_reason(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    payload = order("order_approved", "paid", tracking={"utm_source": None})
    payload["Customer"].update(full_name="John Doe", first_name="John", email="johndoe@example.com")

    response = await deliver(client, shop, payload)

    assert response.json()["status"] == "invalid"
    assert "no click id" in response.json()["reason"]
    assert "TrackingParameters.sck" in response.json()["reason"]
    [entry] = await log_entries(db)
    assert (entry["auth_failed"], entry["txid"]) == (False, ORDER_ID)


async def test_a_body_signed_with_the_webhook_token_is_accepted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    body = json.dumps(approved(shop), indent=2, ensure_ascii=False).encode()

    response = await client.post(
        shop.url,
        params={**shop.token, "signature": sign(body).upper()},
        content=body,
        headers={"content-type": "application/json; charset=utf-8"},
    )

    assert response.json()["status"] == "created"


def tampered(body: bytes) -> tuple[bytes, str]:
    """Signed by Kiwify, then changed on the way: 197,00 became 997,00."""
    return body.replace(b"19700", b"99700"), sign(body)


def signed_with_another_token(body: bytes) -> tuple[bytes, str]:
    return body, sign(body, token="another-webhook")


def unsigned(body: bytes) -> tuple[bytes, str]:
    return body, ""


@pytest.mark.parametrize("request_of", [tampered, signed_with_another_token, unsigned])
async def test_a_signature_that_does_not_match_the_body_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, request_of: Any
) -> None:
    shop = await open_kiwify(client, db)
    body, signature = request_of(json.dumps(approved(shop)).encode())

    response = await client.post(
        shop.url,
        params={**shop.token, "signature": signature} if signature else shop.token,
        content=body,
        headers={"content-type": "application/json"},
    )

    assert response.status_code == 401
    assert response.json() == {
        "status": "invalid",
        "reason": "the signature does not match the body",
        "postback_id": response.json()["postback_id"],
    }
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)
    secrets = (WEBHOOK_TOKEN, shop.workspace.postback_token)
    await assert_log_keeps_no_secret(db, *secrets, *([signature] if signature else []))


async def test_the_signature_and_the_token_never_reach_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_kiwify(client, db)
    payload = approved(shop)

    await deliver(client, shop, payload)
    await deliver(client, shop, payload)

    [created, duplicate] = await log_entries(db)
    assert (created["outcome"], duplicate["outcome"]) == ("created", "duplicate")
    assert "signature=" in created["query"]
    await assert_log_keeps_no_secret(
        db, WEBHOOK_TOKEN, sign(json.dumps(payload).encode()), shop.workspace.postback_token
    )
