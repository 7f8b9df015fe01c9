"""Perfect Pay webhook: one JSON sale posted again at each status change, the status as
sale_status_enum, the panel's token at the root of the body."""

from __future__ import annotations

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

WEBHOOK_TOKEN = "e4a1f9c3b7d25e8a6c0f1b3d5a7c9e2f"  # 32 characters, from the panel
SALE_CODE = "PPCPMTB5H72794"

STATUS_KEYS = {
    1: "pending",
    2: "approved",
    3: "in_process",
    4: "in_mediation",
    5: "rejected",
    6: "cancelled",
    7: "refunded",
    8: "authorized",
    9: "charged_back",
    10: "completed",
    11: "checkout_error",
    12: "precheckout",
    13: "expired",
    16: "in_review",
}


def sale(
    status: int | str,
    *,
    metadata: Mapping[str, str | None],
    amount: float = 147.0,
    payment: str = "credit_card",
) -> dict[str, Any]:
    """The webhook Perfect Pay posts for sale SALE_CODE in ``status``."""
    code = int(status)
    return {
        "token": WEBHOOK_TOKEN,
        "code": SALE_CODE,
        "sale_amount": amount,
        "currency_enum": 1,
        "currency_enum_key": "BRL",
        "coupon_code": None,
        "installments": 1,
        "installment_amount": None,
        "shipping_type_enum": 1,
        "shipping_type_enum_key": "free",
        "shipping_method": None,
        "shipping_amount": None,
        "payment_method_enum": 4 if payment == "credit_card" else 2,
        "payment_method_enum_key": "mastercard" if payment == "credit_card" else payment,
        "payment_type_enum": 1 if payment == "credit_card" else 2,
        "payment_type_enum_key": payment,
        "payment_format_enum": 1,
        "payment_format_enum_key": "regular",
        "original_code": None,
        "billet_url": "https://boleto.perfectpay.example/PPCPMTB5H72794"
        if payment == "boleto"
        else "",
        "billet_number": None,
        "billet_expiration": None,
        "quantity": 1,
        "sale_status_enum": status,
        "sale_status_enum_key": STATUS_KEYS.get(code, "none"),
        "sale_status_detail": STATUS_KEYS.get(code, "none"),
        "date_created": "2024-06-10 14:02:11",
        "date_approved": "2024-06-10 14:03:02" if code in (2, 10) else None,
        "product": {
            "code": "PPPB8K21",
            "name": "Treino em Casa 21 Dias",
            "external_reference": None,
            "guarantee": 7,
        },
        "plan": {"code": "PPLQ4F77", "name": "Plano Completo", "quantity": 1},
        "plan_itens": [],
        "customer": {
            "customer_type_enum": 1,
            "customer_type_enum_key": "physical_person",
            "full_name": "Thiago Ribeiro",
            "email": "thiago.ribeiro@example.com",
            "identification_type": "CPF",
            "identification_number": "86288366757",
            "birthday": None,
            "phone_area_code": "62",
            "phone_number": "981234567",
            "phone_formated_ddi": "+5562981234567",
            "street_name": "Avenida Goiás",
            "street_number": "1500",
            "district": "Centro",
            "complement": "",
            "zip_code": "74010-010",
            "city": "Goiânia",
            "state": "GO",
            "country": "BR",
            "ip": "177.38.200.14",
            "user_agent": "Mozilla/5.0 (Linux; Android 14) Chrome/125.0 Mobile",
        },
        "metadata": {
            "src": None,
            "sck": None,
            "utm_source": "facebook",
            "utm_medium": "cpc",
            "utm_campaign": "treino-21",
            "utm_term": None,
            "utm_content": "reels-4",
            "utm_perfect": None,
            "ref": None,
            **metadata,
        },
        "webhook_owner": "PPAFF7721",
        "commission_amount": 128.11,  # the preset's net field: its name is unverified
        "subscription": None,
    }


async def open_perfectpay(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", WEBHOOK_TOKEN)
    return await open_shop(
        client,
        db,
        preset="perfectpay",
        offer_url="https://go.perfectpay.com.br/PPU38CNN9A?src={click_id}&utm_source=facebook",
        click_param="src",
        **fields,
    )


async def deliver(client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any]) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, json=payload)


@pytest.mark.parametrize("status", [2, "2"], ids=["number", "text"])
async def test_an_approved_sale_is_created_on_its_click(
    client: httpx.AsyncClient, db: AsyncEngine, status: int | str
) -> None:
    shop = await open_perfectpay(client, db)

    response = await deliver(client, shop, sale(status, metadata={"src": shop.click_id}))

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (14700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (SALE_CODE, "approved")
    [entry] = await log_entries(db)
    assert entry["details"]["platform_status"] == "2"


@pytest.mark.parametrize(("amount", "value_minor"), [(97.9, 9790), (1997, 199700), (0.5, 50)])
async def test_the_amount_is_read_in_reais(
    client: httpx.AsyncClient, db: AsyncEngine, amount: float, value_minor: int
) -> None:
    shop = await open_perfectpay(client, db)

    await deliver(client, shop, sale(2, metadata={"src": shop.click_id}, amount=amount))

    assert (await only_conversion(db))["value_minor"] == value_minor


@pytest.mark.parametrize(
    ("status", "payment"), [(1, "boleto"), (1, "pix"), (3, "credit_card"), (16, "credit_card")]
)
async def test_a_payment_not_yet_confirmed_is_pending_not_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine, status: int, payment: str
) -> None:
    shop = await open_perfectpay(client, db)

    response = await deliver(
        client, shop, sale(status, metadata={"src": shop.click_id}, payment=payment)
    )

    assert response.json()["conversion_status"] == "pending"
    assert (await only_conversion(db))["status"] == "pending"


async def test_payment_of_the_boleto_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_perfectpay(client, db)
    metadata = {"src": shop.click_id}

    await deliver(client, shop, sale(1, metadata=metadata, payment="boleto"))
    paid = await deliver(client, shop, sale(2, metadata=metadata, payment="boleto"))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_an_expired_boleto_paid_later_is_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_perfectpay(client, db)
    metadata = {"src": shop.click_id}

    outcomes = [
        (await deliver(client, shop, sale(code, metadata=metadata, payment="boleto"))).json()[
            "status"
        ]
        for code in (1, 13, 2)
    ]

    assert outcomes == ["created", "duplicate", "status_changed"]  # expired is still pending
    assert (await only_conversion(db))["status"] == "approved"


async def test_a_rejected_card_approved_later_is_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_perfectpay(client, db)
    metadata = {"src": shop.click_id}

    outcomes = [
        (await deliver(client, shop, sale(code, metadata=metadata))).json()["status"]
        for code in (5, 2)
    ]

    assert outcomes == ["created", "status_changed"]
    conversion = await only_conversion(db)
    assert conversion["status"] == "approved"
    assert await status_history(db, conversion["id"]) == [
        (None, "declined"),
        ("declined", "approved"),
    ]


@pytest.mark.parametrize(
    ("statuses", "final"),
    [((2, 7), "refunded"), ((2, 9), "chargeback"), ((2, 4, 9), "chargeback")],
    ids=["refund", "chargeback", "mediation-then-chargeback"],
)
async def test_a_refund_or_chargeback_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, statuses: tuple[int, ...], final: str
) -> None:
    shop = await open_perfectpay(client, db)

    outcomes = [
        (await deliver(client, shop, sale(s, metadata={"src": shop.click_id}))).json()["status"]
        for s in statuses
    ]

    assert outcomes[:2] == ["created", "status_changed"]
    assert outcomes[2:] in ([], ["duplicate"])
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


async def test_a_repeated_approval_and_the_later_completed_count_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_perfectpay(client, db)

    outcomes = [
        (await deliver(client, shop, sale(s, metadata={"src": shop.click_id}))).json()["status"]
        for s in (2, 2, 10)
    ]

    assert outcomes == ["created", "duplicate", "duplicate"]
    assert len(await fetch_all(db, conversions)) == 1


@pytest.mark.parametrize("status", [0, 11, 12], ids=["none", "checkout_error", "precheckout"])
async def test_checkout_steps_are_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine, status: int
) -> None:
    shop = await open_perfectpay(client, db)

    response = await deliver(client, shop, sale(status, metadata={"src": shop.click_id}))

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert await fetch_all(db, conversions) == []


@pytest.mark.parametrize(
    "metadata_of",
    [
        lambda click: {"src": click, "sck": "fb-reels"},
        lambda click: {"sck": click},
        lambda click: {"utm_perfect": click},
    ],
    ids=["src", "sck", "utm_perfect"],
)
async def test_the_click_id_is_read_from_src_then_sck_then_utm_perfect(
    client: httpx.AsyncClient, db: AsyncEngine, metadata_of: Any
) -> None:
    shop = await open_perfectpay(client, db)

    await deliver(client, shop, sale(2, metadata=metadata_of(shop.click_id)))

    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_net_value_is_the_commission(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    shop = await open_perfectpay(client, db, value_choice="net")

    await deliver(client, shop, sale(2, metadata={"src": shop.click_id}))

    assert (await only_conversion(db))["value_minor"] == 12811


@pytest.mark.parametrize(
    ("token", "reason"),
    [("00000000000000000000000000000000", "does not match"), (None, "missing")],
    ids=["wrong", "missing"],
)
async def test_a_wrong_or_missing_token_is_refused_and_flagged(
    client: httpx.AsyncClient, db: AsyncEngine, token: str | None, reason: str
) -> None:
    shop = await open_perfectpay(client, db)
    payload = sale(2, metadata={"src": shop.click_id})
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
    shop = await open_perfectpay(client, db)

    await deliver(client, shop, sale(1, metadata={"src": shop.click_id}, payment="pix"))
    await deliver(client, shop, sale(2, metadata={"src": shop.click_id}, payment="pix"))

    assert [e["outcome"] for e in await log_entries(db)] == ["created", "status_changed"]
    await assert_log_keeps_no_secret(db, WEBHOOK_TOKEN, shop.workspace.postback_token)
