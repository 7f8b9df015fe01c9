"""Doppus webhook, both layouts integrations show: `status.code` with the sale in
`transaction.code` and cents in `transaction.total`, or an `event` beside a `data` object; the
click id in `tracking.src`, the token in the `doppus-token` header."""

from __future__ import annotations

from collections.abc import Callable
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

# Doppus shows the merchant a token for its webhook; this is one of the kind.
TOKEN = "dp7Qx2mK9vL4tR8wZ3nB6cY1"
CODE = "DPP2505120941RM7"


def status_webhook(
    code: str, *, src: str | None, total: int = 19700, transaction: str = CODE
) -> dict[str, Any]:
    """What Doppus posts, in the status layout, for sale ``transaction`` now ``code``."""
    return {
        "customer": {
            "name": "Renata Moura",
            "email": "renata.moura@example.com",
            "phone": "5531988776655",
            "doc_type": "CPF",
            "doc": "52998224725",
            "ip_address": "189.40.12.7",
        },
        "address": {"zipcode": "30130-000", "city": "Belo Horizonte", "state": "MG"},
        "items": [
            {
                "code": "PRD7731",
                "name": "Curso Receitas Fit",
                "offer": "OF21",
                "offer_name": "Oferta principal",
                "type": "principal",
                "value": total,
            }
        ],
        "affiliate": {"code": None, "name": None, "email": None},
        "recurrence": {"code": None, "periodicy": None},
        "transaction": {
            "code": transaction,
            "registration_date": "2025-05-12 09:41:07",
            "subtotal": total,
            "discount": 0,
            "total": total,
            "fee_doppus": 1567,
            "fee_producer": total - 1567,
        },
        "payment": {"method": "creditcard", "plots": 1},
        "links": {"billet": None, "qrcode": None, "checkout": None},
        "tracking": {
            "utm_source": "facebook",
            "utm_medium": "cpc",
            "utm_campaign": "receitas-fit",
            "utm_term": None,
            "utm_content": None,
            "src": src,
        },
        "status": {
            "registration_date": "2025-05-12 09:41:07",
            "code": code,
            "message": code.title(),
        },
    }


def event_webhook(event: str, *, src: str | None, transaction: str = CODE) -> dict[str, Any]:
    """What Doppus posts, in the event layout, for sale ``transaction`` on ``event``."""
    return {
        "event": event,
        "data": {
            "transaction_code": transaction,
            "registration_date": "2025-05-12 09:41:07",
            "status_text": None,
            "customer": {"name": "Renata Moura", "email": "renata.moura@example.com"},
            "product": {"code": "PRD7731", "name": "Curso Receitas Fit"},
            "transaction": {"total": 19700},
            "tracking": {"src": src, "utm_source": "facebook"},
        },
    }


async def open_doppus(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    return await open_shop(
        client,
        db,
        preset="doppus",
        offer_url="https://checkout.doppus.app/PRD7731?src={click_id}&utm_source=facebook",
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


async def test_an_approved_sale_is_a_sale_on_its_click_with_cents_read(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_doppus(client, db)

    response = await deliver(client, shop, status_webhook("approved", src=shop.click_id))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (CODE, "approved")


@pytest.mark.parametrize(
    ("code", "expected_event", "expected"),
    [
        ("approved", "SALE", "approved"),
        ("waiting", "SALE", "pending"),
        ("waiting_payment", "SALE", "pending"),
        ("pending", "SALE", "pending"),
        ("in_analysis", "SALE", "pending"),
        ("expired", "SALE", "pending"),
        ("refused", "SALE", "declined"),
        ("canceled", "SALE", "declined"),
        ("cancelled", "SALE", "declined"),
        ("refunded", "SALE", "refunded"),
        ("reversed", "SALE", "refunded"),
        ("chargeback", "SALE", "chargeback"),
        ("renewed", "REBILL", "approved"),
        ("renewal", "REBILL", "approved"),
    ],
)
async def test_each_status_code_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, code: str, expected_event: str, expected: str
) -> None:
    shop = await open_doppus(client, db)

    response = await deliver(client, shop, status_webhook(code, src=shop.click_id))

    assert (response.json()["event"], response.json()["conversion_status"]) == (
        expected_event,
        expected,
    )
    assert (await only_conversion(db))["status"] == expected


@pytest.mark.parametrize(
    ("event", "expected_event", "expected"),
    [
        ("PAYMENT_APPROVED", "SALE", "approved"),
        ("PAYMENT_REFUNDED", "SALE", "refunded"),
        ("SUBSCRIPTION_EXPIRED", "REBILL", "pending"),
    ],
)
async def test_each_event_of_the_event_layout_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, event: str, expected_event: str, expected: str
) -> None:
    shop = await open_doppus(client, db)

    response = await deliver(client, shop, event_webhook(event, src=shop.click_id))

    assert (response.json()["event"], response.json()["conversion_status"]) == (
        expected_event,
        expected,
    )
    conversion = await only_conversion(db)
    assert (conversion["txid"], conversion["value_minor"]) == (CODE, 19700)


async def test_payment_of_the_boleto_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_doppus(client, db)

    await deliver(client, shop, status_webhook("waiting", src=shop.click_id))
    paid = await deliver(client, shop, status_webhook("approved", src=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_an_expired_boleto_paid_later_still_counts(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_doppus(client, db)

    await deliver(client, shop, status_webhook("expired", src=shop.click_id))
    paid = await deliver(client, shop, status_webhook("approved", src=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    assert (await only_conversion(db))["status"] == "approved"


async def test_a_late_renewal_paid_later_becomes_an_approved_rebill(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_doppus(client, db)
    renewal = "DPP2506120941RM8"

    await deliver(
        client, shop, event_webhook("SUBSCRIPTION_EXPIRED", src=shop.click_id, transaction=renewal)
    )
    paid = await deliver(
        client, shop, status_webhook("renewed", src=shop.click_id, transaction=renewal)
    )

    assert (paid.json()["status"], paid.json()["event"]) == ("status_changed", "REBILL")
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(
    ("code", "final"), [("refunded", "refunded"), ("chargeback", "chargeback")]
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, code: str, final: str
) -> None:
    shop = await open_doppus(client, db)

    await deliver(client, shop, status_webhook("approved", src=shop.click_id))
    await deliver(client, shop, status_webhook(code, src=shop.click_id))

    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


@pytest.mark.parametrize(
    "cancellation",
    [
        lambda src: status_webhook("subscription_canceled", src=src),
        lambda src: event_webhook("SUBSCRIPTION_CANCELLED", src=src),
    ],
    ids=["status", "event"],
)
async def test_a_cancelled_subscription_leaves_the_first_sale_counted(
    client: httpx.AsyncClient, db: AsyncEngine, cancellation: Callable[[str], dict[str, Any]]
) -> None:
    shop = await open_doppus(client, db)

    await deliver(client, shop, status_webhook("approved", src=shop.click_id))
    response = await deliver(client, shop, cancellation(shop.click_id))

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert (await only_conversion(db))["status"] == "approved"


@pytest.mark.parametrize("code", ["abandoned", "cart_abandoned"])
async def test_an_abandoned_checkout_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, code: str
) -> None:
    shop = await open_doppus(client, db)

    response = await deliver(client, shop, status_webhook(code, src=shop.click_id))

    assert (response.json()["status"], response.json()["event"]) == ("ignored", "LEAD")
    assert await fetch_all(db, conversions) == []


async def test_an_unknown_status_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_doppus(client, db)

    response = await deliver(client, shop, status_webhook("inactive", src=shop.click_id))

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert await fetch_all(db, conversions) == []


async def test_net_value_is_the_producers_share(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    shop = await open_doppus(client, db, value_choice="net")

    await deliver(client, shop, status_webhook("approved", src=shop.click_id))

    assert (await only_conversion(db))["value_minor"] == 18133


async def test_a_sale_without_src_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_doppus(client, db)

    response = await deliver(client, shop, status_webhook("approved", src=None))

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "no click id in the request (looked in: tracking.src, tracking.sck)"
    )


@pytest.mark.parametrize("header", ["doppus-token", "x-doppus-token"])
async def test_the_token_is_accepted_in_either_header_and_never_reaches_the_log(
    client: httpx.AsyncClient, db: AsyncEngine, header: str
) -> None:
    shop = await open_doppus(client, db, secret=TOKEN)

    response = await deliver(
        client, shop, status_webhook("approved", src=shop.click_id), {header: TOKEN}
    )

    assert response.json()["status"] == "created"
    await assert_log_keeps_no_secret(
        db, TOKEN, shop.workspace.postback_token, "renata.moura@example.com", "52998224725"
    )


@pytest.mark.parametrize("sent", ["dp0000000000000000000000", None], ids=["wrong", "missing"])
async def test_with_a_secret_a_wrong_or_missing_token_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, sent: str | None
) -> None:
    shop = await open_doppus(client, db, secret=TOKEN)
    headers = {"doppus-token": sent} if sent else {}

    response = await deliver(client, shop, status_webhook("approved", src=shop.click_id), headers)

    assert response.status_code == 401
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)


async def test_without_a_secret_a_delivery_without_token_is_accepted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_doppus(client, db)

    response = await deliver(client, shop, status_webhook("approved", src=shop.click_id))

    assert response.json()["status"] == "created"
