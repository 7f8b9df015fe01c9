"""Ticto webhook v2: JSON with the amounts in cents, the panel's token in the body, and
"Não Informado" wherever a tracking field is empty."""

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

WEBHOOK_TOKEN = "tct_4Nq8Rz2Lw6Yx1Vb5Kc9Hd3Jf7Gm0Ps"
ORDER_HASH = "TOPA8C3D1E9F"
EMPTY = "Não Informado"


def webhook(
    status: str,
    *,
    tracking: dict[str, str],
    paid_amount: int = 19700,
    payment: str = "credit_card",
) -> dict[str, Any]:
    """What Ticto posts for order ORDER_HASH in ``status``."""
    return {
        "version": "2.0",
        "token": WEBHOOK_TOKEN,
        "status": status,
        "status_date": "2024-06-10 14:03:22",
        "payment_method": payment,
        "commission_type": "producer",
        "order": {
            "id": 5512397,
            "hash": ORDER_HASH,
            "transaction_hash": "TPC7B2A9D4E1F6",
            "paid_amount": paid_amount,
            "installments": 1,
            "order_date": "2024-06-10 14:02:11",
        },
        "item": {
            "product_id": 88231,
            "product_name": "Confeitaria Lucrativa",
            "offer_id": 120934,
            "offer_name": "Oferta Principal",
            "offer_code": "O2Q7LK",
            "amount": paid_amount,
            "quantity": 1,
        },
        "producer": {
            "id": 4471,
            "name": "Doce Ofício Cursos LTDA",
            "email": "financeiro@doceoficio.example",
            "amount": 17322,
            "cms": "173,22",
        },
        "customer": {
            "name": "Luana Ferraz",
            "email": "luana.ferraz@example.com",
            "cpf": "29537914814",
            "cnpj": None,
            "phone": {"ddi": "+55", "ddd": "71", "number": "988112233"},
            "address": {
                "street": "Avenida Sete de Setembro",
                "street_number": "1234",
                "complement": EMPTY,
                "neighborhood": "Vitória",
                "city": "Salvador",
                "state": "BA",
                "zip_code": "40080-001",
                "country": "Brasil",
            },
        },
        "tracking": {
            "utm_source": "facebook",
            "utm_medium": EMPTY,
            "utm_campaign": "confeitaria-junho",
            "utm_content": EMPTY,
            "utm_term": EMPTY,
            "src": EMPTY,
            "sck": EMPTY,
            "manychat_user_id": EMPTY,
            **tracking,
        },
        "query_params": {"utm_source": "facebook", "fbclid": "IwAR2x9"},
        "transaction": {
            "hash": "TPC7B2A9D4E1F6",
            "pix_qr_code": "00020126580014br.gov.bcb.pix" if payment == "pix" else None,
            "pix_url": None,
            "bank_slip_url": "https://ticto.example/boleto/5512397"
            if payment == "bank_slip"
            else None,
        },
    }


async def open_ticto(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", WEBHOOK_TOKEN)
    return await open_shop(
        client,
        db,
        preset="ticto",
        offer_url="https://checkout.ticto.app/O2Q7LK?sck={click_id}&utm_source=facebook",
        click_param="sck",
        **fields,
    )


async def deliver(client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any]) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, json=payload)


@pytest.mark.parametrize(("cents", "value_minor"), [(19700, 19700), (4790, 4790), (1, 1)])
async def test_an_authorized_order_is_a_sale_with_its_amount_read_in_cents(
    client: httpx.AsyncClient, db: AsyncEngine, cents: int, value_minor: int
) -> None:
    shop = await open_ticto(client, db)

    payload = webhook("authorized", tracking={"sck": shop.click_id}, paid_amount=cents)
    response = await deliver(client, shop, payload)

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (value_minor, "BRL")
    assert (conversion["txid"], conversion["status"]) == (ORDER_HASH, "approved")
    [entry] = await log_entries(db)
    assert entry["details"]["platform_status"] == "authorized"


@pytest.mark.parametrize(
    ("status", "payment"),
    [("pix_created", "pix"), ("bank_slip_created", "bank_slip"), ("waiting_payment", "pix")],
)
async def test_a_generated_pix_or_boleto_is_pending_not_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine, status: str, payment: str
) -> None:
    shop = await open_ticto(client, db)

    response = await deliver(
        client, shop, webhook(status, tracking={"sck": shop.click_id}, payment=payment)
    )

    assert response.json()["conversion_status"] == "pending"
    assert (await only_conversion(db))["status"] == "pending"


async def test_payment_of_the_pix_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)
    tracking = {"sck": shop.click_id}

    await deliver(client, shop, webhook("pix_created", tracking=tracking, payment="pix"))
    paid = await deliver(client, shop, webhook("authorized", tracking=tracking, payment="pix"))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_an_expired_pix_paid_later_is_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)
    tracking = {"sck": shop.click_id}

    await deliver(client, shop, webhook("pix_created", tracking=tracking, payment="pix"))
    expired = await deliver(client, shop, webhook("pix_expired", tracking=tracking, payment="pix"))
    paid = await deliver(client, shop, webhook("authorized", tracking=tracking, payment="pix"))

    assert expired.json()["status"] == "duplicate"  # still pending: it may be paid
    assert paid.json()["status"] == "status_changed"
    assert (await only_conversion(db))["status"] == "approved"


@pytest.mark.parametrize(
    ("status", "final"), [("refunded", "refunded"), ("chargeback", "chargeback")]
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, status: str, final: str
) -> None:
    shop = await open_ticto(client, db)

    await deliver(client, shop, webhook("authorized", tracking={"sck": shop.click_id}))
    response = await deliver(client, shop, webhook(status, tracking={"sck": shop.click_id}))

    assert response.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


async def test_a_repeated_authorization_and_a_complaint_count_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)

    outcomes = [
        (await deliver(client, shop, webhook(s, tracking={"sck": shop.click_id}))).json()["status"]
        for s in ("authorized", "authorized", "claimed")
    ]

    assert outcomes == ["created", "duplicate", "duplicate"]
    assert (await only_conversion(db))["status"] == "approved"


@pytest.mark.parametrize(
    "status", ["abandoned_cart", "subscription_canceled", "card_exchanged", "trial_started"]
)
async def test_cart_and_subscription_notices_are_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, status: str
) -> None:
    shop = await open_ticto(client, db)

    response = await deliver(client, shop, webhook(status, tracking={"sck": shop.click_id}))

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert await fetch_all(db, conversions) == []


async def test_an_amount_in_cents_too_long_to_divide_is_invalid_not_an_error(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)
    cents = int("9" * 40)  # more digits than Decimal's precision once divided by 100

    response = await deliver(
        client, shop, webhook("authorized", tracking={"sck": shop.click_id}, paid_amount=cents)
    )

    assert response.status_code == 400
    assert (response.json()["status"], response.json()["reason"]) == (
        "invalid",
        f"amount {str(cents)!r} is larger than 10000000",
    )
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["reason"]) == ("invalid", response.json()["reason"])
    assert await fetch_all(db, conversions) == []


async def test_nao_informado_in_every_tracking_field_means_no_click_id(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)

    response = await deliver(client, shop, webhook("authorized", tracking={}))

    assert response.status_code == 400
    assert response.json()["status"] == "invalid"
    assert "no click id" in response.json()["reason"]
    assert await fetch_all(db, conversions) == []


async def test_nao_informado_in_sck_falls_through_to_src(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)

    response = await deliver(
        client, shop, webhook("authorized", tracking={"sck": "não informado", "src": shop.click_id})
    )

    assert response.json()["status"] == "created"
    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_an_unknown_src_behind_an_empty_sck_is_an_orphan(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)

    response = await deliver(client, shop, webhook("authorized", tracking={"src": "ig-bio-link"}))

    assert response.json()["status"] == "orphan"
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["raw_click_id"]) == (None, "ig-bio-link")


async def test_a_sale_is_in_reais_even_where_the_workspace_reports_in_dollars(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db, workspace_currency="USD")

    await deliver(client, shop, webhook("authorized", tracking={"sck": shop.click_id}))

    conversion = await only_conversion(db)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")


async def test_net_value_is_the_producers_amount_in_cents(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db, value_choice="net")

    await deliver(client, shop, webhook("authorized", tracking={"sck": shop.click_id}))

    assert (await only_conversion(db))["value_minor"] == 17322


@pytest.mark.parametrize(
    ("token", "reason"),
    [("tct_0000000000000000000000000000", "does not match"), (None, "missing")],
    ids=["wrong", "missing"],
)
async def test_a_wrong_or_missing_token_is_refused_and_flagged(
    client: httpx.AsyncClient, db: AsyncEngine, token: str | None, reason: str
) -> None:
    shop = await open_ticto(client, db)
    payload = webhook("authorized", tracking={"sck": shop.click_id})
    payload["token"] = token

    response = await deliver(client, shop, payload)

    assert response.status_code == 401
    assert reason in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)
    secrets = [WEBHOOK_TOKEN, shop.workspace.postback_token, *([token] if token else [])]
    await assert_log_keeps_no_secret(db, *secrets)


async def test_the_webhook_token_and_the_workspace_token_never_reach_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_ticto(client, db)

    await deliver(client, shop, webhook("authorized", tracking={"sck": shop.click_id}))
    await deliver(client, shop, webhook("refunded", tracking={"sck": shop.click_id}))

    assert [e["outcome"] for e in await log_entries(db)] == ["created", "status_changed"]
    await assert_log_keeps_no_secret(db, WEBHOOK_TOKEN, shop.workspace.postback_token)
