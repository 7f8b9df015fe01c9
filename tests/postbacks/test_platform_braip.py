"""Braip postback: UNVERIFIED field names (no capture yet), a form keyed on the `trans_status`
text, with `basic_authentication` in the body.

The payloads here follow the names of Braip's sales API (trans_*, prod_*, plan_*, cli_*), which
the postback is assumed to share; replace them with a real capture when one is taken.
"""

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

BASIC_AUTHENTICATION = "b7e1c9a4f2d84e6a9b3c5d7e1f2a4b6c"
TRANS_KEY = "vnd8k2m4p6q1r3s5"

STATUS_CODES = {
    "Aguardando Pagamento": "1",
    "Pagamento Aprovado": "2",
    "Cancelada": "3",
    "Chargeback": "4",
    "Devolvida": "5",
    "Estorno Pendente": "7",
}


def postback(
    status: str, *, src: str, trans_key: str = TRANS_KEY, value: str = "197.00"
) -> dict[str, Any]:
    return {
        "basic_authentication": BASIC_AUTHENTICATION,
        "type": "STATUS_ALTERADO",
        "trans_key": trans_key,
        "trans_status": status,
        "trans_status_code": STATUS_CODES.get(status, "0"),
        "trans_value": value,
        "trans_total_value": value,
        "trans_freight": "0.00",
        "trans_freight_type": "",
        "trans_payment": "Cartão de crédito",
        "trans_installments": "1",
        "trans_createdate": "2024-06-10 14:02:11",
        "trans_updatedate": "2024-06-10 14:03:02",
        "trans_payment_date": "2024-06-10 14:03:02" if status == "Pagamento Aprovado" else "",
        "prod_key": "pro4x8z1",
        "prod_name": "Emagrecer de Vez",
        "plan_key": "pla8k2j9",
        "plan_name": "Kit 3 meses",
        "plan_amount": "1",
        "cli_name": "Carla Mendes",
        "cli_email": "carla.mendes@example.com",
        "cli_cel": "5585988776655",
        "cli_document": "27136842009",
        "cli_address": "Avenida Beira Mar",
        "cli_address_number": "2500",
        "cli_address_district": "Meireles",
        "cli_address_city": "Fortaleza",
        "cli_address_state": "CE",
        "cli_address_zip_code": "60165-121",
        "has_order_bump": "0",
        "src": src,
        "utm_source": "facebook",
        "utm_medium": "cpc",
        "utm_campaign": "kit-3-meses",
        "utm_content": "video-depoimento",
        "commissions": [{"type": "Produtor", "value": "171.37"}],
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
    return await client.post(shop.url, params=shop.token, **form_body(php_form(payload)))


@pytest.mark.parametrize("as_json", [False, True], ids=["form", "json"])
async def test_an_approved_payment_is_a_sale_on_its_click(
    client: httpx.AsyncClient, db: AsyncEngine, as_json: bool
) -> None:
    shop = await open_braip(client, db)
    payload = postback("Pagamento Aprovado", src=shop.click_id)

    if as_json:
        response = await client.post(shop.url, params=shop.token, json=payload)
    else:
        response = await deliver(client, shop, payload)

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (19700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (TRANS_KEY, "approved")
    [entry] = await log_entries(db)
    assert entry["details"]["platform_status"] == "Pagamento Aprovado"


async def test_the_status_text_is_matched_whatever_its_case(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback("PAGAMENTO APROVADO", src=shop.click_id))

    assert response.json()["conversion_status"] == "approved"


@pytest.mark.parametrize("status", ["Aguardando Pagamento", "Em Análise", "Em Processamento"])
async def test_a_payment_not_yet_confirmed_is_pending_not_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine, status: str
) -> None:
    shop = await open_braip(client, db)

    response = await deliver(client, shop, postback(status, src=shop.click_id))

    assert response.json()["conversion_status"] == "pending"
    assert (await only_conversion(db))["status"] == "pending"


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


async def test_net_value_is_read_where_the_merchant_points_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    # The commission's place in Braip's postback is unverified: the merchant sets the path.
    shop = await open_braip(
        client, db, value_choice="net", field_paths={"net_value": "commissions.0.value"}
    )

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
