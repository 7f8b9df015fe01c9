"""Braip postback: a JSON body in cents, tracking nested in `meta`, buyer fields `client_*`,
the status keyed on `trans_status_code` (the text where the code is not one the preset knows),
with `basic_authentication` in the body. The payloads follow the layout public receivers of
Braip's postback agree on."""

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

BASIC_AUTHENTICATION = "b7e1c9a4f2d84e6a9b3c5d7e1f2a4b6c"
TRANS_KEY = "vnd8k2m4p6q1r3s5"

STATUS_CODES = {
    "Aguardando Pagamento": 1,
    "Pagamento Aprovado": 2,
    "Cancelada": 3,
    "Chargeback": 4,
}


def postback(
    status: str,
    *,
    src: str | None,
    code: int | None = None,
    kind: str = "STATUS_ALTERADO",
    trans_key: str = TRANS_KEY,
    value: int = 19700,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The postback Braip posts for sale TRANS_KEY in ``status`` (its text; ``code`` defaults to
    the text's code where receivers agree on one, else a code the preset does not know)."""
    return {
        "basic_authentication": BASIC_AUTHENTICATION,
        "type": kind,
        "trans_key": trans_key,
        "trans_status": status,
        "trans_status_code": code if code is not None else STATUS_CODES.get(status, 9),
        "trans_value": value,
        "trans_total_value": value,
        "trans_freight": 0,
        "trans_payment": 2,
        "trans_installments": 1,
        "trans_createdate": "2024-06-10 14:02:11",
        "trans_updatedate": "2024-06-10 14:03:02",
        "product_key": "pro4x8z1",
        "product_name": "Emagrecer de Vez",
        "plan_key": "pla8k2j9",
        "plan_name": "Kit 3 meses",
        "plan_amount": 1,
        "client_name": "Carla Mendes",
        "client_email": "carla.mendes@example.com",
        "client_cel": "55 85988776655",
        "client_documment": "27136842009",
        "client_address": "Avenida Beira Mar",
        "client_address_number": "2500",
        "client_address_city": "Fortaleza",
        "client_address_state": "CE",
        "client_zip_code": "60165-121",
        "commissions": [{"type": "Produtor", "value": 17137}],
        "meta": meta
        if meta is not None
        else {
            "src": src,
            "sck": None,
            "utm_source": "facebook",
            "utm_medium": "cpc",
            "utm_campaign": "kit-3-meses",
            "utm_content": "video-depoimento",
            "utm_term": None,
        },
    }


async def open_braip(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", BASIC_AUTHENTICATION)
    return await open_shop(
        client,
        db,
        preset="braip",
        offer_url="https://ev.braip.com/checkout/pla8k2j9/che4m7x1?src={click_id}",
        click_param="src",
        **fields,
    )


async def deliver(client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any]) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, json=payload)


async def test_an_approved_payment_is_a_sale_on_its_click_in_reais_from_cents(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback("Pagamento Aprovado", src=shop.click_id))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (TRANS_KEY, "approved")
    [entry] = await log_entries(db)
    assert entry["details"]["platform_status"] == "2"


@pytest.mark.parametrize(
    ("status", "code", "expected"),
    [
        ("Pagamento Aprovado", 2, "approved"),
        ("Aguardando Pagamento", 1, "pending"),
        ("Em Análise", 6, "pending"),
        ("Em Processamento", 8, "pending"),
        ("Pagamento Atrasado", 10, "pending"),
        ("Parcialmente Pago", 11, "pending"),
        ("Cancelada", 3, "declined"),
        ("Chargeback", 4, "chargeback"),
        ("Devolvida", 5, "refunded"),
        ("Estorno Pendente", 7, "approved"),
    ],
)
async def test_each_status_opens_the_conversion_it_names(
    client: httpx.AsyncClient, db: AsyncEngine, status: str, code: int, expected: str
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback(status, src=shop.click_id, code=code))

    assert response.json()["conversion_status"] == expected
    assert (await only_conversion(db))["status"] == expected


async def test_a_known_code_decides_over_the_text(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback("Status Novo", src=shop.click_id, code=2))

    assert response.json()["conversion_status"] == "approved"


async def test_the_status_text_is_matched_whatever_its_case(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback("DEVOLVIDA", src=shop.click_id, code=5))

    assert response.json()["conversion_status"] == "refunded"


async def test_an_abandoned_checkout_is_logged_and_never_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)
    abandoned = {
        "basic_authentication": BASIC_AUTHENTICATION,
        "type": "ABANDONO",
        "abandonment_key": "abd7f3k2",
        "checkout_url": "https://ev.braip.com/checkout/pla8k2j9/che4m7x1",
        "product_key": "pro4x8z1",
        "plan_key": "pla8k2j9",
        "client_name": "Carla Mendes",
        "client_email": "carla.mendes@example.com",
        "meta": {"src": shop.click_id},
    }

    response = await deliver(client, shop, abandoned)

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("ignored", "LEAD")
    assert await fetch_all(db, conversions) == []


@pytest.mark.parametrize(
    "meta_of",
    [
        lambda click: {"src": click, "sck": "reels"},
        lambda click: {"src": None, "sck": click},
    ],
    ids=["meta.src", "meta.sck"],
)
async def test_the_click_id_is_read_from_meta(
    client: httpx.AsyncClient, db: AsyncEngine, meta_of: Any
) -> None:
    shop = await open_braip(client, db)

    payload = postback("Pagamento Aprovado", src=None, meta=meta_of(shop.click_id))
    await deliver(client, shop, payload)

    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_a_sale_without_src_in_meta_is_invalid_naming_where_it_looked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback("Pagamento Aprovado", src=None))

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "no click id in the request (looked in: meta.src, meta.sck, src, sck)"
    )
    assert await fetch_all(db, conversions) == []


async def test_payment_of_the_boleto_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    await deliver(client, shop, postback("Aguardando Pagamento", src=shop.click_id))
    paid = await deliver(client, shop, postback("Pagamento Aprovado", src=shop.click_id))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


@pytest.mark.parametrize(
    ("status", "final"), [("Devolvida", "refunded"), ("Chargeback", "chargeback")]
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, status: str, final: str
) -> None:
    shop = await open_braip(client, db)

    await deliver(client, shop, postback("Pagamento Aprovado", src=shop.click_id))
    response = await deliver(client, shop, postback(status, src=shop.click_id))

    assert response.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


async def test_a_repeated_approval_and_a_pending_refund_request_count_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    outcomes = [
        (await deliver(client, shop, postback(status, src=shop.click_id))).json()["status"]
        for status in ("Pagamento Aprovado", "Pagamento Aprovado", "Estorno Pendente")
    ]

    assert outcomes == ["created", "duplicate", "duplicate"]
    assert (await only_conversion(db))["status"] == "approved"


async def test_a_status_text_the_preset_does_not_know_is_logged_not_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback("Agendado", src=shop.click_id))

    assert response.status_code == 200
    assert response.json() | {"postback_id": None} == {
        "status": "ignored",
        "event": "SALE",
        "reason": "the mapping does not count event 'STATUS_ALTERADO', status 'Agendado'",
        "postback_id": None,
    }
    assert await fetch_all(db, conversions) == []


async def test_a_sale_is_in_reais_even_where_the_workspace_reports_in_dollars(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db, workspace_currency="USD")

    await deliver(client, shop, postback("Pagamento Aprovado", src=shop.click_id))

    conversion = await only_conversion(db)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")


async def test_net_value_is_the_first_commission_in_cents(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db, value_choice="net")

    await deliver(client, shop, postback("Pagamento Aprovado", src=shop.click_id))

    assert (await only_conversion(db))["value_minor"] == 17137


@pytest.mark.parametrize(
    ("sent", "reason"),
    [("0000000000000000aaaaaaaaaaaaaaaa", "does not match"), (None, "missing")],
    ids=["wrong", "missing"],
)
async def test_a_wrong_or_missing_basic_authentication_is_refused_and_flagged(
    client: httpx.AsyncClient, db: AsyncEngine, sent: str | None, reason: str
) -> None:
    shop = await open_braip(client, db)
    payload = postback("Pagamento Aprovado", src=shop.click_id)
    payload["basic_authentication"] = sent

    response = await deliver(client, shop, payload)

    assert response.status_code == 401
    assert reason in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["auth_failed"]) == ("invalid", True)
    secrets = [BASIC_AUTHENTICATION, shop.workspace.postback_token, *([sent] if sent else [])]
    await assert_log_keeps_no_secret(db, *secrets)


async def test_basic_authentication_and_the_token_never_reach_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    await deliver(client, shop, postback("Aguardando Pagamento", src=shop.click_id))
    await deliver(client, shop, postback("Pagamento Aprovado", src=shop.click_id))

    assert [e["outcome"] for e in await log_entries(db)] == ["created", "status_changed"]
    await assert_log_keeps_no_secret(db, BASIC_AUTHENTICATION, shop.workspace.postback_token)
