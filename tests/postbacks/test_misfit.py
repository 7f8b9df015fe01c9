"""A body that fits nothing the merchant's preset reads is invalid, never ignored: the sale it
may be is in the log with the reason, which names the preset the body fits when one does."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.postbacks import test_platform_eduzz as legacy
from tests.postbacks import test_platform_eduzz_v3 as v3
from tests.postbacks import test_platform_kiwify as kiwify
from tests.postbacks.shop import log_entries, open_shop
from trilha.db.schema import conversions
from trilha.i18n import translator

LEGACY_LOOKED = "(looked in: trans_status, trans_cod)"


async def open_merchant(
    client: httpx.AsyncClient, db: AsyncEngine, preset: str, **fields: Any
) -> Any:
    return await open_shop(
        client,
        db,
        preset=preset,
        offer_url="https://checkout.example/p?src={click_id}",
        click_param="src",
        **fields,
    )


async def test_an_eduzz_v3_body_sent_to_a_legacy_eduzz_merchant_is_invalid_naming_v3(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_merchant(client, db, "eduzz")

    response = await client.post(
        shop.url, params=shop.token, json=v3.invoice("myeduzz.invoice_paid", code1=shop.click_id)
    )

    assert response.status_code == 400
    assert response.json()["status"] == "invalid"
    assert response.json()["reason"] == (
        f"the body has none of the fields the preset 'Eduzz' reads {LEGACY_LOOKED}; "
        "this looks like a webhook of 'Eduzz (v3)'; choose that preset"
    )
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["reason"]) == ("invalid", response.json()["reason"])


async def test_a_legacy_eduzz_body_sent_to_an_eduzz_v3_merchant_names_the_legacy_preset(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_merchant(client, db, "eduzz_v3")

    response = await client.post(
        shop.url, params=shop.token, json=legacy.invoice(3, trk=shop.click_id)
    )

    assert response.status_code == 400
    assert response.json()["reason"].endswith(
        "; this looks like a webhook of 'Eduzz'; choose that preset"
    )


async def test_a_kiwify_order_sent_to_a_hotmart_merchant_names_kiwify(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_merchant(client, db, "hotmart")
    order = kiwify.order("order_approved", "paid", tracking={"sck": shop.click_id})

    response = await client.post(shop.url, params=shop.token, json=order)

    assert response.status_code == 400
    assert response.json()["reason"] == (
        "the body has none of the fields the preset 'Hotmart' reads (looked in: event, "
        "data.purchase.status, data.purchase.transaction); this looks like a webhook of "
        "'Kiwify'; choose that preset"
    )


async def test_a_body_no_preset_reads_is_invalid_without_a_suggestion(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_merchant(client, db, "eduzz")

    response = await client.post(shop.url, params=shop.token, json={"hello": "world"})

    assert response.status_code == 400
    assert response.json()["reason"] == (
        f"the body has none of the fields the preset 'Eduzz' reads {LEGACY_LOOKED}"
    )


async def test_a_merchant_with_a_secret_answers_401_and_still_names_the_fitting_preset(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_merchant(client, db, "eduzz", secret=legacy.ORIGIN)

    response = await client.post(
        shop.url, params=shop.token, json=v3.invoice("myeduzz.invoice_paid", code1=shop.click_id)
    )

    assert response.status_code == 401
    reason = response.json()["reason"]
    assert reason.startswith("the merchant's secret is missing from the request; ")
    assert reason.endswith("this looks like a webhook of 'Eduzz (v3)'; choose that preset")


async def test_a_generic_merchant_takes_any_body(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_merchant(client, db, "generic")

    response = await client.post(shop.url, params=shop.token, json={"click_id": shop.click_id})

    assert response.json()["status"] == "created"


@pytest.mark.parametrize(
    ("reason", "translated"),
    [
        (
            f"the body has none of the fields the preset 'Eduzz' reads {LEGACY_LOOKED}; "
            "this looks like a webhook of 'Eduzz (v3)'; choose that preset",
            "o corpo não tem nenhum dos campos que o modelo 'Eduzz' lê (procurado em: "
            "trans_status, trans_cod); isto parece um webhook de 'Eduzz (v3)'; escolha esse "
            "modelo",
        ),
        (
            "no click id in the request (looked in: meta.src, meta.sck, src, sck)",
            "nenhum id de clique na requisição (procurado em: meta.src, meta.sck, src, sck)",
        ),
    ],
)
def test_the_reasons_are_translated_in_portuguese(reason: str, translated: str) -> None:
    assert translator("pt-BR").error(reason) == translated
