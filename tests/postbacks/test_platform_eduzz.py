"""Eduzz webhook (legacy, Órbita): trans_* fields as a form or as JSON, `origin` as the secret,
the click id in tracker_trk, the status as a trans_status code."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.postbacks.shop import (
    Shop,
    assert_log_keeps_no_secret,
    form_body,
    log_entries,
    only_conversion,
    open_shop,
    php_form,
    status_history,
)
from trilha.db.schema import conversions

ORIGIN = "3d9f2c7a1b8e4f6a0c5d2e9b7a1f3c8d"
API_KEY = "ak_9b8c7d6e5f4a3b2c1d0e"  # the deprecated key, still sent alongside
INVOICE = "48213577"

PAYMENT_METHODS = {"boleto": 1, "card": 15, "pix": 32}


def invoice(
    status: int,
    *,
    trk: str,
    method: str = "card",
    value: str = "297.00",
    paid: str | None = None,
    currency: str = "BRL",
) -> dict[str, Any]:
    """What Eduzz posts for invoice INVOICE in trans_status ``status``."""
    is_paid = status in (3, 6, 7)
    return {
        "origin": ORIGIN,
        "api_key": API_KEY,
        "edz_fat_cod": INVOICE,
        "trans_cod": INVOICE,
        "trans_key": "c7d9e1f3a5b7",
        "trans_orderid": "",
        "trans_value": value,
        "trans_paid": (paid or value) if is_paid else "0.00",
        "trans_currency": currency,
        "trans_status": str(status),
        "trans_createdate": "20240610",
        "trans_createtime": "140211",
        "trans_paiddate": "20240610" if is_paid else "",
        "trans_paidtime": "140302" if is_paid else "",
        "trans_duedate": "20240613",
        "trans_paymentmethod": str(PAYMENT_METHODS[method]),
        "trans_installments": "1",
        "trans_barcode": "23793381286000000004252000063308793400000029700"
        if method == "boleto"
        else "",
        "billet_url": "https://sun.eduzz.com/boleto/48213577" if method == "boleto" else "",
        "page_checkout_url": "https://sun.eduzz.com/1928374",
        "trans_items": [
            {"item_id": "1928374", "item_name": "Inglês em 90 Dias", "item_value": value}
        ],
        "trans_items_quantity": "1",
        "product_cod": "1928374",
        "product_name": "Inglês em 90 Dias",
        "product_refund": "7",
        "cus_cod": "77120934",
        "cus_name": "Bruno Tavares",
        "cus_email": "bruno.tavares@example.com",
        "cus_taxnumber": "74682489040",
        "cus_cel": "(51) 99812-3344",
        "cus_address": "Avenida Ipiranga",
        "cus_address_number": "6681",
        "cus_address_district": "Partenon",
        "cus_address_city": "Porto Alegre",
        "cus_address_state": "RS",
        "cus_address_zip_code": "90619-900",
        "eduzz_value": "25.84",
        "pro_value": "271.16",
        "aff_cod": "",
        "aff_name": "",
        "aff_email": "",
        "aff_value": "0.00",
        "tracker_trk": trk,
        "tracker_trk2": "",
        "tracker_trk3": "",
        "tracker_utm_source": "google",
        "tracker_utm_medium": "cpc",
        "tracker_utm_campaign": "ingles-90",
        "tracker_utm_content": "rsa-2",
    }


async def open_eduzz(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", ORIGIN)
    return await open_shop(
        client,
        db,
        preset="eduzz",
        offer_url="https://sun.eduzz.com/1928374?trk={click_id}&utm_source=google",
        click_param="trk",
        **fields,
    )


async def deliver(client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any]) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, **form_body(php_form(payload)))


@pytest.mark.parametrize("as_json", [False, True], ids=["form", "json"])
async def test_a_paid_invoice_is_a_sale_on_its_click(
    client: httpx.AsyncClient, db: AsyncEngine, as_json: bool
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice(3, trk=shop.click_id)

    if as_json:
        payload["trans_status"] = 3  # the JSON variant sends numbers
        response = await client.post(shop.url, params=shop.token, json=payload)
    else:
        response = await deliver(client, shop, payload)

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (29700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (INVOICE, "approved")
    [entry] = await log_entries(db)
    assert entry["details"]["platform_status"] == "3"


async def test_a_sale_in_another_currency_keeps_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    await deliver(client, shop, invoice(3, trk=shop.click_id, value="49.90", currency="usd"))

    conversion = await only_conversion(db)
    assert (conversion["value_minor"], conversion["currency"]) == (4990, "USD")


@pytest.mark.parametrize(
    ("status", "method"), [(1, "boleto"), (1, "pix"), (8, "card"), (11, "boleto"), (15, "boleto")]
)
async def test_an_open_or_waiting_invoice_is_pending_not_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine, status: int, method: str
) -> None:
    shop = await open_eduzz(client, db)

    response = await deliver(client, shop, invoice(status, trk=shop.click_id, method=method))

    assert response.json()["conversion_status"] == "pending"
    assert (await only_conversion(db))["status"] == "pending"


async def test_payment_of_the_boleto_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    await deliver(client, shop, invoice(1, trk=shop.click_id, method="boleto"))
    paid = await deliver(client, shop, invoice(3, trk=shop.click_id, method="boleto"))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert (conversion["status"], conversion["value_minor"]) == ("approved", 29700)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_a_cancelled_invoice_declines_the_pending_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    await deliver(client, shop, invoice(1, trk=shop.click_id, method="boleto"))
    response = await deliver(client, shop, invoice(4, trk=shop.click_id, method="boleto"))

    assert response.json()["status"] == "status_changed"
    assert (await only_conversion(db))["status"] == "declined"


async def test_an_expired_invoice_paid_later_is_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    outcomes = [
        (await deliver(client, shop, invoice(status, trk=shop.click_id, method="boleto"))).json()[
            "status"
        ]
        for status in (1, 10, 3)
    ]

    assert outcomes == ["created", "duplicate", "status_changed"]  # expired is still pending
    conversion = await only_conversion(db)
    assert conversion["status"] == "approved"
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_a_refund_request_keeps_the_sale_and_the_refund_changes_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    outcomes = [
        (await deliver(client, shop, invoice(status, trk=shop.click_id))).json()["status"]
        for status in (3, 6, 7)
    ]

    assert outcomes == ["created", "duplicate", "status_changed"]
    conversion = await only_conversion(db)
    assert conversion["status"] == "refunded"
    assert await status_history(db, conversion["id"]) == [
        (None, "approved"),
        ("approved", "refunded"),
    ]


async def test_a_chargeback_mapped_by_the_user_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    # The legacy webhook has no chargeback code; a merchant rule can give one a meaning.
    rule = {"when_status": "12", "event_type": "SALE", "status": "chargeback"}
    shop = await open_eduzz(client, db, rules=[rule])

    await deliver(client, shop, invoice(3, trk=shop.click_id))
    response = await deliver(client, shop, invoice(12, trk=shop.click_id))

    assert response.json()["status"] == "status_changed"
    assert (await only_conversion(db))["status"] == "chargeback"


async def test_a_repeated_paid_invoice_is_a_duplicate(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    first = await deliver(client, shop, invoice(3, trk=shop.click_id))
    again = await deliver(client, shop, invoice(3, trk=shop.click_id, paid="301.50"))

    assert [first.json()["status"], again.json()["status"]] == ["created", "duplicate"]
    assert (await only_conversion(db))["value_minor"] == 29700


@pytest.mark.parametrize("status", [9, 12], ids=["duplicated-invoice", "unknown-code"])
async def test_a_duplicated_invoice_or_unknown_code_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, status: int
) -> None:
    shop = await open_eduzz(client, db)

    response = await deliver(client, shop, invoice(status, trk=shop.click_id))

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert await fetch_all(db, conversions) == []


@pytest.mark.parametrize(
    ("value_choice", "extra", "value_minor"),
    [
        ("gross", {}, 29700),
        ("net", {}, 18206),
        ("net", {"field_paths": {"net_value": "aff_value"}}, 8910),
    ],
    ids=["gross", "producer-net", "affiliate-net"],
)
async def test_the_value_is_gross_or_the_producers_or_the_affiliates_net(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    value_choice: str,
    extra: dict[str, Any],
    value_minor: int,
) -> None:
    shop = await open_eduzz(client, db, value_choice=value_choice, **extra)
    payload = invoice(3, trk=shop.click_id)
    payload.update(aff_cod="5521", aff_name="Lia Afiliada", aff_value="89.10", pro_value="182.06")

    await deliver(client, shop, payload)

    assert (await only_conversion(db))["value_minor"] == value_minor


async def test_the_click_id_is_read_from_trk_then_utm_content(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice(3, trk="")
    payload["tracker_utm_content"] = shop.click_id

    response = await deliver(client, shop, payload)

    assert response.json()["status"] == "created"
    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_an_invoice_without_a_tracker_is_invalid_with_the_reason(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice(3, trk="")
    payload["tracker_utm_content"] = ""

    response = await deliver(client, shop, payload)

    assert response.status_code == 400
    assert "tracker_trk, tracker_utm_content" in response.json()["reason"]


@pytest.mark.parametrize(
    ("origin", "reason"),
    [("ffffffffffffffffffffffffffffffff", "does not match"), (None, "does not match")],
    ids=["wrong-origin", "only-the-old-api-key"],
)
async def test_a_wrong_origin_is_refused_and_flagged(
    client: httpx.AsyncClient, db: AsyncEngine, origin: str | None, reason: str
) -> None:
    shop = await open_eduzz(client, db)
    payload = invoice(3, trk=shop.click_id)
    payload["origin"] = origin

    response = await deliver(client, shop, payload)

    assert response.status_code == 401
    assert reason in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert entry["auth_failed"] is True
    secrets = [ORIGIN, API_KEY, shop.workspace.postback_token, *([origin] if origin else [])]
    await assert_log_keeps_no_secret(db, *secrets)


async def test_origin_api_key_and_token_never_reach_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_eduzz(client, db)

    await deliver(client, shop, invoice(1, trk=shop.click_id, method="pix"))
    await client.post(shop.url, params=shop.token, json=invoice(3, trk=shop.click_id))

    assert [e["outcome"] for e in await log_entries(db)] == ["created", "status_changed"]
    await assert_log_keeps_no_secret(db, ORIGIN, API_KEY, shop.workspace.postback_token)
