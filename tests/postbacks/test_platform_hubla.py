"""Hubla webhook v2: JSON `{type, event}`, the invoice in `event.invoice` (amounts in cents), the
click id in the checkout's `utm.content`, the Hubla token in the `x-hubla-token` header."""

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

# Shaped like the token Hubla's panel issues: 64 letters and digits.
HUBLA_TOKEN = "jzc0chHwKwHDl1fi1UKvNgQ47dtOR01OcvTVU7ZmzaiyVFc2XdfQAYv990AF7KiY"
INVOICE_ID = "5c1e7a90-3d2b-4f6e-8a41-b7d9e2c3f018"
RENEWAL_ID = "9e4b2d17-6a3c-4b8f-a0d5-1f7c3e9b2a64"

STATUSES = {
    "invoice.created": "draft",
    "invoice.payment_succeeded": "paid",
    "invoice.payment_failed": "unpaid",
    "invoice.expired": "expired",
    "invoice.refunded": "refunded",
}


def webhook(
    kind: str,
    *,
    content: str | None,
    status: str | None = None,
    invoice_type: str = "sell",
    invoice_id: str = INVOICE_ID,
    session: str = "paymentSession",
) -> dict[str, Any]:
    """What Hubla posts on ``kind`` for an invoice of R$ 197,00."""
    return {
        "type": kind,
        "event": {
            "product": {"id": "inAVzweR0QYw5y03K5mq", "name": "Mentoria Tráfego"},
            "invoice": {
                "id": invoice_id,
                "subscriptionId": "d7ab5027-5bca-476c-ac29-68f1359ee6ca",
                "payerId": "J0kmLJmCj1TO4m3pqW0GDlEjROQ2",
                "payer": {
                    "id": "J0kmLJmCj1TO4m3pqW0GDlEjROQ2",
                    "firstName": "Bruno",
                    "lastName": "Teixeira",
                    "document": "39053344705",
                    "email": "bruno.teixeira@example.com",
                    "phone": "+5511987001122",
                },
                "installments": 1,
                "paymentMethod": "pix",
                "currency": "BRL",
                "type": invoice_type,
                "status": status or STATUSES[kind],
                "statusAt": [],
                "amount": {
                    "subtotalCents": 19700,
                    "discountCents": 0,
                    "prorataCents": 0,
                    "installmentFeeCents": 0,
                    "totalCents": 19700,
                },
                "receivers": [
                    {"id": "platform-identity", "role": "platform", "totalCents": 1950},
                    {"id": "onVILjt4hEhXIdCrvCXBUpcBuvk2", "role": "seller", "totalCents": 17750},
                ],
                session: {
                    "ip": "203.0.113.9",
                    "utm": {
                        "source": "facebook",
                        "medium": "cpc",
                        "campaign": "mentoria",
                        "content": content,
                        "term": None,
                    },
                },
            },
        },
    }


async def open_hubla(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", HUBLA_TOKEN)
    return await open_shop(
        client,
        db,
        preset="hubla",
        offer_url="https://pay.hub.la/inAVzweR0QYw5y03K5mq?utm_content={click_id}",
        click_param="utm_content",
        **fields,
    )


async def deliver(
    client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any], token: str | None = HUBLA_TOKEN
) -> httpx.Response:
    headers = {"x-hubla-token": token} if token else {}
    return await client.post(shop.url, params=shop.token, json=payload, headers=headers)


async def test_a_paid_invoice_is_a_sale_on_its_click_in_reais(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hubla(client, db)

    response = await deliver(
        client, shop, webhook("invoice.payment_succeeded", content=shop.click_id)
    )

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (INVOICE_ID, "approved")


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        ("invoice.payment_succeeded", None, "approved"),
        ("invoice.status_updated", "unpaid", "pending"),
        ("invoice.status_updated", "paid", "approved"),
        ("invoice.payment_failed", None, "pending"),
        ("invoice.expired", None, "pending"),
        ("invoice.refunded", None, "refunded"),
    ],
)
async def test_each_invoice_event_opens_the_sale_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, kind: str, status: str | None, expected: str
) -> None:
    shop = await open_hubla(client, db)

    response = await deliver(client, shop, webhook(kind, content=shop.click_id, status=status))

    assert (response.json()["event"], response.json()["conversion_status"]) == ("SALE", expected)
    assert (await only_conversion(db))["status"] == expected


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        ("invoice.payment_succeeded", None, "approved"),
        ("invoice.status_updated", "unpaid", "pending"),
        ("invoice.payment_failed", None, "pending"),
        ("invoice.expired", None, "pending"),
        ("invoice.refunded", None, "refunded"),
    ],
)
async def test_a_renewals_invoice_is_a_rebill_on_the_first_click(
    client: httpx.AsyncClient, db: AsyncEngine, kind: str, status: str | None, expected: str
) -> None:
    shop = await open_hubla(client, db)
    payload = webhook(
        kind,
        content=shop.click_id,
        status=status,
        invoice_type="renewal",
        invoice_id=RENEWAL_ID,
        session="firstPaymentSession",
    )

    response = await deliver(client, shop, payload)

    assert (response.json()["event"], response.json()["conversion_status"]) == (
        "REBILL",
        expected,
    )
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["txid"]) == (shop.click_id, RENEWAL_ID)


async def test_an_overdue_renewal_paid_later_becomes_an_approved_rebill(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hubla(client, db)

    for kind in ("invoice.payment_failed", "invoice.payment_succeeded"):
        last = await deliver(
            client,
            shop,
            webhook(kind, content=shop.click_id, invoice_type="renewal", invoice_id=RENEWAL_ID),
        )

    assert last.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_a_failed_card_then_paid_invoice_counts_as_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hubla(client, db)

    await deliver(client, shop, webhook("invoice.payment_failed", content=shop.click_id))
    await deliver(client, shop, webhook("invoice.payment_succeeded", content=shop.click_id))

    conversion = await only_conversion(db)
    assert conversion["status"] == "approved"


async def test_a_refund_after_payment_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hubla(client, db)

    await deliver(client, shop, webhook("invoice.payment_succeeded", content=shop.click_id))
    await deliver(client, shop, webhook("invoice.refunded", content=shop.click_id))

    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "approved"),
        ("approved", "refunded"),
    ]


@pytest.mark.parametrize(
    "payload",
    [
        {"type": "subscription.deactivated", "event": {"subscription": {"id": "s1"}}},
        {"type": "subscription.created", "event": {"subscription": {"id": "s1"}}},
        {"type": "customer.member_added", "event": {"user": {"id": "u1"}}},
    ],
    ids=["cancelled", "created", "member"],
)
async def test_subscription_and_member_events_are_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, payload: dict[str, Any]
) -> None:
    shop = await open_hubla(client, db)

    await deliver(client, shop, webhook("invoice.payment_succeeded", content=shop.click_id))
    response = await deliver(client, shop, payload)

    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    assert (await only_conversion(db))["status"] == "approved"


async def test_a_draft_invoice_is_never_counted(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    shop = await open_hubla(client, db)

    response = await deliver(client, shop, webhook("invoice.created", content=shop.click_id))

    assert response.json()["status"] == "ignored"
    assert await fetch_all(db, conversions) == []


async def test_net_value_is_the_sellers_share(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    shop = await open_hubla(client, db, value_choice="net")

    await deliver(client, shop, webhook("invoice.payment_succeeded", content=shop.click_id))

    assert (await only_conversion(db))["value_minor"] == 17750


async def test_a_sale_without_utm_content_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hubla(client, db)

    response = await deliver(client, shop, webhook("invoice.payment_succeeded", content=None))

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "no click id in the request (looked in: event.invoice.paymentSession.utm.content, "
        "event.invoice.firstPaymentSession.utm.content)"
    )


@pytest.mark.parametrize("token", ["0" * 64, None], ids=["wrong", "missing"])
async def test_a_wrong_or_missing_hubla_token_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, token: str | None
) -> None:
    shop = await open_hubla(client, db)

    response = await deliver(
        client, shop, webhook("invoice.payment_succeeded", content=shop.click_id), token
    )

    assert response.status_code == 401
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)


async def test_the_token_and_the_payer_never_reach_the_log_in_clear(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hubla(client, db)

    await deliver(client, shop, webhook("invoice.payment_succeeded", content=shop.click_id))

    [entry] = await log_entries(db)
    assert entry["outcome"] == "created"
    await assert_log_keeps_no_secret(
        db, HUBLA_TOKEN, shop.workspace.postback_token, "bruno.teixeira@example.com", "39053344705"
    )
