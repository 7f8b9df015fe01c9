"""Hotmart webhook 2.0.0: JSON purchase events, the hottok in X-HOTMART-HOTTOK (and the body)."""

from __future__ import annotations

import copy
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

HOTTOK = "Zq3vT8mWb1LkP6xNc4RjYh7sGd2FaE9u"
TEST_TRANSACTION = "HP16015479281022"  # Hotmart's fixed test transaction

BUYER = {
    "email": "marina.souza@example.com",
    "name": "Marina Souza",
    "first_name": "Marina",
    "last_name": "Souza",
    "checkout_phone_code": "55",
    "checkout_phone": "11987654321",
    "document": "39053344705",
    "document_type": "CPF",
    "address": {
        "city": "Campinas",
        "country": "Brasil",
        "country_iso": "BR",
        "state": "São Paulo",
        "neighborhood": "Cambuí",
        "zipcode": "13025-320",
        "address": "Rua Coronel Quirino",
        "number": "1200",
        "complement": "ap 42",
    },
}


def purchase(
    event: str,
    status: str,
    *,
    origin: dict[str, str],
    transaction: str = "HP1121439028",
    value: float = 197.9,
    currency: str = "BRL",
    payment: str = "CREDIT_CARD",
) -> dict[str, Any]:
    """A purchase event as Hotmart 2.0.0 posts it."""
    approved = event in ("PURCHASE_APPROVED", "PURCHASE_COMPLETE")
    return {
        "id": "5f6d2a8c-4b1e-4e0a-9c7d-3a2b1c0d9e8f",
        "creation_date": 1718039012345,
        "event": event,
        "version": "2.0.0",
        "data": {
            "product": {
                "id": 3528471,
                "ucode": "f1d2c3b4-a596-4788-b9c0-d1e2f3a4b5c6",
                "name": "Fermentação Natural do Zero",
                "warranty_date": "2024-06-17T00:00:00Z",
                "support_email": "suporte@padariaescola.example",
                "has_co_production": False,
                "is_physical_product": False,
            },
            "affiliates": [{"affiliate_code": "Q58388177J", "name": "Ana Afiliada"}],
            "buyer": copy.deepcopy(BUYER),
            "producer": {
                "name": "Padaria Escola LTDA",
                "document": "12345678000199",
                "legal_nature": "Pessoa Jurídica",
            },
            "commissions": [
                {"value": 19.79, "source": "MARKETPLACE", "currency_value": currency},
                {"value": 158.32, "source": "PRODUCER", "currency_value": currency},
                {"value": 19.79, "source": "AFFILIATE", "currency_value": currency},
            ],
            "purchase": {
                "approved_date": 1718039010000 if approved else None,
                "full_price": {"value": value, "currency_value": currency},
                "original_offer_price": {"value": value, "currency_value": currency},
                "price": {"value": value, "currency_value": currency},
                "checkout_country": {"name": "Brasil", "iso": "BR"},
                "order_bump": {"is_order_bump": False},
                "origin": origin,
                "order_date": 1718038900000,
                "status": status,
                "transaction": transaction,
                "payment": {"installments_number": 1, "type": payment},
                "offer": {"code": "k2pasun0", "coupon_code": None},
                "sckPaymentLink": "sckPaymentLinkTest",
                "is_funnel": False,
                "business_model": "I",
            },
        },
        "hottok": HOTTOK,
    }


async def open_hotmart(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", HOTTOK)
    return await open_shop(
        client,
        db,
        preset="hotmart",
        offer_url="https://pay.hotmart.com/X84725164L?sck={click_id}&src=meta-ads",
        click_param="sck",
        **fields,
    )


async def deliver(
    client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any], *, hottok: str | None = HOTTOK
) -> httpx.Response:
    headers = {"X-HOTMART-HOTTOK": hottok} if hottok is not None else {}
    return await client.post(shop.url, params=shop.token, json=payload, headers=headers)


def approved(shop: Shop, **overrides: Any) -> dict[str, Any]:
    return purchase("PURCHASE_APPROVED", "APPROVED", origin={"sck": shop.click_id}, **overrides)


@pytest.mark.parametrize(
    ("value", "currency", "value_minor"),
    [(197.9, "BRL", 19790), (1497, "BRL", 149700), (49.99, "USD", 4999)],
)
async def test_an_approved_purchase_is_a_sale_on_its_click(
    client: httpx.AsyncClient, db: AsyncEngine, value: float, currency: str, value_minor: int
) -> None:
    shop = await open_hotmart(client, db)

    response = await deliver(client, shop, approved(shop, value=value, currency=currency))

    assert response.status_code == 200
    answer = response.json()
    assert (answer["status"], answer["event"], answer["conversion_status"]) == (
        "created",
        "SALE",
        "approved",
    )
    conversion = await only_conversion(db)
    assert answer["conversion_id"] == conversion["id"]
    assert (conversion["click_id"], conversion["campaign_id"], conversion["merchant_id"]) == (
        shop.click_id,
        shop.campaign.id,
        shop.merchant.id,
    )
    assert (conversion["value_minor"], conversion["currency"]) == (value_minor, currency)
    assert (conversion["txid"], conversion["status"]) == ("HP1121439028", "approved")
    assert await status_history(db, conversion["id"]) == [(None, "approved")]
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["merchant_id"], entry["txid"]) == (
        "created",
        shop.merchant.id,
        "HP1121439028",
    )
    assert entry["details"]["platform_event"] == "PURCHASE_APPROVED"


@pytest.mark.parametrize(
    ("payment", "status"), [("BILLET", "PRINTED_BILLET"), ("PIX", "WAITING_PAYMENT")]
)
async def test_a_generated_boleto_or_pix_is_pending_not_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine, payment: str, status: str
) -> None:
    shop = await open_hotmart(client, db)
    payload = purchase(
        "PURCHASE_BILLET_PRINTED", status, origin={"sck": shop.click_id}, payment=payment
    )

    response = await deliver(client, shop, payload)

    assert response.json()["status"] == "created"
    assert response.json()["conversion_status"] == "pending"
    conversion = await only_conversion(db)
    assert (conversion["status"], conversion["value_minor"]) == ("pending", 19790)


async def test_payment_of_the_boleto_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    origin = {"sck": shop.click_id}

    printed = await deliver(
        client, shop, purchase("PURCHASE_BILLET_PRINTED", "BILLET_PRINTED", origin=origin)
    )
    paid = await deliver(client, shop, approved(shop))

    assert [printed.json()["status"], paid.json()["status"]] == ["created", "status_changed"]
    assert paid.json()["reason"] == "pending → approved"
    conversion = await only_conversion(db)
    assert conversion["status"] == "approved"
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_an_expired_boleto_paid_later_is_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    origin = {"sck": shop.click_id}

    await deliver(
        client, shop, purchase("PURCHASE_BILLET_PRINTED", "PRINTED_BILLET", origin=origin)
    )
    expired = await deliver(client, shop, purchase("PURCHASE_EXPIRED", "EXPIRED", origin=origin))
    paid = await deliver(client, shop, purchase("PURCHASE_APPROVED", "APPROVED", origin=origin))

    assert expired.json()["status"] == "duplicate"  # still pending: it may be paid
    assert paid.json()["status"] == "status_changed"
    assert (await only_conversion(db))["status"] == "approved"


@pytest.mark.parametrize(
    ("first", "first_status"),
    [("PURCHASE_DELAYED", "DELAYED"), ("PURCHASE_CANCELED", "CANCELED")],
    ids=["overdue", "refused"],
)
async def test_a_charge_hotmart_recovers_is_a_sale_with_its_history(
    client: httpx.AsyncClient, db: AsyncEngine, first: str, first_status: str
) -> None:
    shop = await open_hotmart(client, db)
    origin = {"sck": shop.click_id}

    failed = await deliver(client, shop, purchase(first, first_status, origin=origin))
    recovered = await deliver(
        client, shop, purchase("PURCHASE_APPROVED", "APPROVED", origin=origin)
    )

    assert (failed.json()["status"], recovered.json()["status"]) == ("created", "status_changed")
    conversion = await only_conversion(db)
    assert (conversion["event_type"], conversion["status"]) == ("SALE", "approved")
    before = "pending" if first == "PURCHASE_DELAYED" else "declined"
    assert await status_history(db, conversion["id"]) == [(None, before), (before, "approved")]


@pytest.mark.parametrize(
    ("event", "status", "final"),
    [
        ("PURCHASE_REFUNDED", "REFUNDED", "refunded"),
        ("PURCHASE_CHARGEBACK", "CHARGEBACK", "chargeback"),
    ],
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, status: str, final: str
) -> None:
    shop = await open_hotmart(client, db)

    await deliver(client, shop, approved(shop))
    response = await deliver(client, shop, purchase(event, status, origin={"sck": shop.click_id}))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["conversion_status"]) == (
        "status_changed",
        final,
    )
    conversion = await only_conversion(db)
    assert (conversion["status"], conversion["value_minor"]) == (final, 19790)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


async def test_a_repeated_approval_and_the_later_complete_event_count_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    complete = purchase("PURCHASE_COMPLETE", "COMPLETED", origin={"sck": shop.click_id})

    outcomes = [
        (await deliver(client, shop, payload)).json()["status"]
        for payload in (approved(shop), approved(shop), complete)
    ]

    assert outcomes == ["created", "duplicate", "duplicate"]
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved")]


async def test_an_order_bump_is_a_sale_of_its_own(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    bump = approved(shop, transaction="HP1121439029", value=47)
    bump["data"]["purchase"]["order_bump"] = {
        "is_order_bump": True,
        "parent_purchase_transaction": "HP1121439028",
    }

    await deliver(client, shop, approved(shop))
    response = await deliver(client, shop, bump)

    assert response.json()["status"] == "created"
    values = {c["txid"]: c["value_minor"] for c in await fetch_all(db, conversions)}
    assert values == {"HP1121439028": 19790, "HP1121439029": 4700}


@pytest.mark.parametrize(
    ("event", "status"),
    [
        ("PURCHASE_PROTEST", "DISPUTE"),
        ("PURCHASE_DELAYED", "DELAYED"),
        ("SUBSCRIPTION_CANCELLATION", "CANCELLED"),
        ("SWITCH_PLAN", "ACTIVE"),
        ("CLUB_FIRST_ACCESS", "ACTIVE"),
    ],
)
async def test_events_after_the_sale_leave_it_as_it_is(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, status: str
) -> None:
    shop = await open_hotmart(client, db)
    await deliver(client, shop, approved(shop))

    response = await deliver(client, shop, purchase(event, status, origin={"sck": shop.click_id}))

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert (await only_conversion(db))["status"] == "approved"


@pytest.mark.parametrize(
    "event", ["PURCHASE_PROTEST", "SUBSCRIPTION_CANCELLATION", "PURCHASE_OUT_OF_SHOPPING_CART"]
)
async def test_events_that_are_no_sale_are_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, event: str
) -> None:
    shop = await open_hotmart(client, db)

    response = await deliver(client, shop, purchase(event, "", origin={"sck": shop.click_id}))

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert event in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["details"]["platform_event"]) == ("ignored", event)


@pytest.mark.parametrize(
    "origin_of",
    [
        lambda click: {"sck": click, "src": "meta-ads"},
        lambda click: {"src": click},
        lambda click: {"xcod": click},
        lambda click: {"sck": "", "src": click, "xcod": "afiliado-7"},
    ],
    ids=["sck", "src", "xcod", "empty-sck"],
)
async def test_the_click_id_is_read_from_sck_then_src_then_xcod(
    client: httpx.AsyncClient, db: AsyncEngine, origin_of: Any
) -> None:
    shop = await open_hotmart(client, db)

    payload = purchase("PURCHASE_APPROVED", "APPROVED", origin=origin_of(shop.click_id))
    response = await deliver(client, shop, payload)

    assert response.json()["status"] == "created"
    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_a_purchase_without_a_tracking_code_is_invalid_with_the_reason(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    response = await deliver(client, shop, purchase("PURCHASE_APPROVED", "APPROVED", origin={}))

    assert response.status_code == 400
    assert response.json()["status"] == "invalid"
    assert "data.purchase.origin.sck" in response.json()["reason"]
    assert await fetch_all(db, conversions) == []


async def test_hotmarts_test_delivery_is_kept_as_an_orphan_not_an_error(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    payload = purchase(
        "PURCHASE_APPROVED",
        "APPROVED",
        origin={"sck": "HOTMART_TEST_SCK"},  # no click of ours
        transaction=TEST_TRANSACTION,
        value=1500,
    )
    payload["data"]["product"].update(id=0, name="Produto test postback2")
    payload["data"]["buyer"]["email"] = "testeComprador271101postman15@example.com"

    response = await deliver(client, shop, payload)

    assert response.status_code == 200
    assert response.json()["status"] == "orphan"
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["raw_click_id"], conversion["txid"]) == (
        None,
        "HOTMART_TEST_SCK",
        TEST_TRANSACTION,
    )


async def test_net_value_is_the_producers_commission(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db, value_choice="net")

    await deliver(client, shop, approved(shop))

    assert (await only_conversion(db))["value_minor"] == 15832


async def test_the_right_hottok_header_is_accepted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    payload = approved(shop)
    del payload["hottok"]  # the header alone is enough

    response = await deliver(client, shop, payload)

    assert response.json()["status"] == "created"
    [entry] = await log_entries(db)
    assert entry["auth_failed"] is False


async def test_the_hottok_in_the_body_is_enough_without_the_header(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    response = await deliver(client, shop, approved(shop), hottok=None)

    assert response.json()["status"] == "created"


@pytest.mark.parametrize(
    ("header", "body_hottok", "reason"),
    [
        ("not-the-hottok-1234", HOTTOK, "does not match"),
        ("not-the-hottok-1234", "not-the-hottok-1234", "does not match"),
        (None, None, "missing"),
    ],
    ids=["wrong-header", "wrong-both", "none"],
)
async def test_a_wrong_or_missing_hottok_is_refused_and_flagged(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    header: str | None,
    body_hottok: str | None,
    reason: str,
) -> None:
    shop = await open_hotmart(client, db)
    payload = approved(shop)
    payload["hottok"] = body_hottok

    response = await deliver(client, shop, payload, hottok=header)

    assert response.status_code == 401
    assert response.json()["status"] == "invalid"
    assert reason in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)
    await assert_log_keeps_no_secret(
        db, HOTTOK, "not-the-hottok-1234", shop.workspace.postback_token
    )


async def test_the_hottok_and_the_token_never_reach_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    await deliver(client, shop, approved(shop))
    await deliver(client, shop, approved(shop))

    [created, duplicate] = await log_entries(db)
    assert (created["outcome"], duplicate["outcome"]) == ("created", "duplicate")
    assert '"hottok"' in created["body"]  # the field stays, its value is masked
    await assert_log_keeps_no_secret(db, HOTTOK, shop.workspace.postback_token)


async def test_a_mistyped_merchant_in_the_url_keeps_the_hottok_out_of_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    response = await client.post(
        "/pb/hotmart-loja",
        params=shop.token,
        json=approved(shop),
        headers={"X-HOTMART-HOTTOK": HOTTOK},
    )

    assert response.status_code == 400
    assert "unknown merchant" in response.json()["reason"]
    await assert_log_keeps_no_secret(db, HOTTOK, shop.workspace.postback_token)


async def test_the_plain_postback_url_keeps_the_hottok_out_of_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    response = await client.post(
        "/postback", params=shop.token, json=approved(shop), headers={"X-HOTMART-HOTTOK": HOTTOK}
    )

    assert response.status_code == 400  # the generic mapping cannot read Hotmart's events
    assert response.json()["status"] == "invalid"
    await assert_log_keeps_no_secret(db, HOTTOK, shop.workspace.postback_token)


def renewal(shop: Shop, event: str, status: str, charge: int) -> dict[str, Any]:
    """A subscription's charge number ``charge``, each its own transaction."""
    payload = purchase(
        event, status, origin={"sck": shop.click_id}, transaction=f"HP11214390{charge:02d}"
    )
    payload["data"]["purchase"]["recurrence_number"] = charge
    payload["data"]["subscription"] = {
        "status": "ACTIVE",
        "plan": {"id": 771, "name": "Mensal"},
        "subscriber": {"code": "9OL3KY4O"},
    }
    return payload


async def test_a_subscriptions_later_charges_are_rebills_and_an_overdue_one_counts_when_paid(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    first = await deliver(client, shop, renewal(shop, "PURCHASE_APPROVED", "APPROVED", 1))
    second = await deliver(client, shop, renewal(shop, "PURCHASE_APPROVED", "APPROVED", 2))
    overdue = await deliver(client, shop, renewal(shop, "PURCHASE_DELAYED", "DELAYED", 3))
    retried = await deliver(client, shop, renewal(shop, "PURCHASE_APPROVED", "APPROVED", 3))
    cancelled = await deliver(
        client,
        shop,
        {**renewal(shop, "PURCHASE_APPROVED", "APPROVED", 3), "event": "SUBSCRIPTION_CANCELLATION"},
    )

    assert [(r.json()["status"], r.json()["event"]) for r in (first, second, overdue)] == [
        ("created", "SALE"),
        ("created", "REBILL"),
        ("created", "REBILL"),
    ]
    assert overdue.json()["conversion_status"] == "pending"
    assert retried.json()["status"] == "status_changed"
    assert cancelled.json()["status"] == "ignored"
    found = {c["txid"]: (c["event_type"], c["status"]) for c in await fetch_all(db, conversions)}
    assert found == {
        "HP1121439001": ("SALE", "approved"),
        "HP1121439002": ("REBILL", "approved"),
        "HP1121439003": ("REBILL", "approved"),
    }


async def test_a_renewals_refund_takes_back_the_rebill(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    await deliver(client, shop, renewal(shop, "PURCHASE_APPROVED", "APPROVED", 2))
    refunded = await deliver(client, shop, renewal(shop, "PURCHASE_REFUNDED", "REFUNDED", 2))

    assert (refunded.json()["status"], refunded.json()["event"]) == ("status_changed", "REBILL")
    conversion = await only_conversion(db)
    assert (conversion["event_type"], conversion["status"]) == ("REBILL", "refunded")
