"""Every configured secret is masked wherever a stored request holds it: query, form, JSON,
headers and raw body, right or wrong, long or short; the API's log view shows it masked."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.postbacks.shop import Shop, log_entries, open_shop
from tests.web.callers import make_member
from trilha.db.schema import merchants
from trilha.postbacks.log import MASK, mask
from trilha.workspaces import Role

SHOP_KEY = "Sk-3f9a7c1e5b2d8f4a6c0e1b3d"
WRONG = "wrong-guess-9Qz7Lm2Xv4Kp"
OFFER = "https://loja.example.com/checkout?src={click_id}"


async def open_generic(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    return await open_shop(
        client, db, preset="generic", offer_url=OFFER, click_param="src", **fields
    )


async def stored_and_shown(client: httpx.AsyncClient, db: AsyncEngine, shop: Shop) -> str:
    """Every stored log entry, and the API's view of each, as one text."""
    entries = await log_entries(db)
    viewer = await make_member(db, shop.workspace, Role.VIEWER)
    url = f"/api/v1/workspaces/{shop.workspace.id}/postbacks"
    shown = [
        (await client.get(f"{url}/{entry['id']}", headers=viewer.headers)).text for entry in entries
    ]
    return json.dumps(entries, default=str) + "".join(shown)


@pytest.mark.parametrize("sent", [SHOP_KEY, WRONG])
async def test_a_secret_sent_in_a_custom_header_is_masked_in_the_log_and_its_view(
    client: httpx.AsyncClient, db: AsyncEngine, sent: str
) -> None:
    shop = await open_generic(client, db, secret=SHOP_KEY, field_paths={"secret": "X-Shop-Key"})

    response = await client.post(
        shop.url,
        params={**shop.token, "click_id": shop.click_id, "txid": "T1"},
        json={"note": f"key {sent}"},
        headers={"X-Shop-Key": sent},
    )

    assert response.json()["status"] == ("created" if sent == SHOP_KEY else "invalid")
    [entry] = await log_entries(db)
    assert ["x-shop-key", MASK] in entry["headers"]
    assert entry["body"] == f'{{"note":"key {MASK}"}}'
    text = await stored_and_shown(client, db, shop)
    assert sent not in text
    assert SHOP_KEY not in text


@pytest.mark.parametrize(
    ("preset", "header"),
    [("hotmart", "X-HOTMART-HOTTOK"), ("eduzz", "X-Signature"), ("kiwify", "X-Api-Key")],
)
async def test_a_platform_s_secret_header_is_masked_even_when_it_is_wrong(
    client: httpx.AsyncClient, db: AsyncEngine, preset: str, header: str
) -> None:
    shop = await open_shop(
        client, db, preset=preset, offer_url=OFFER, click_param="src", secret=SHOP_KEY
    )

    await client.post(
        shop.url,
        params=shop.token,
        json={"click_id": shop.click_id, "echo": WRONG},
        headers={header: WRONG},
    )

    [entry] = await log_entries(db)
    assert [header.lower(), MASK] in entry["headers"]
    assert WRONG not in await stored_and_shown(client, db, shop)


async def set_secret_directly(db: AsyncEngine, shop: Shop, secret: str) -> None:
    """A secret stored before secrets needed 16 characters."""
    async with db.begin() as conn:
        await conn.execute(
            update(merchants).where(merchants.c.id == shop.merchant.id).values(secret=secret)
        )


async def test_a_three_character_secret_still_authenticates_and_is_masked_everywhere(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, field_paths={"secret": "X-Shop-Key"})
    await set_secret_directly(db, shop, "Q-7")

    in_header = await client.post(
        shop.url,
        params={**shop.token, "click_id": shop.click_id, "txid": "T1"},
        json={"secret_copy": "Q-7", "count": 3, "product": "Q-7x course"},
        headers={"X-Shop-Key": "Q-7"},
    )
    in_query = await client.get(
        shop.url,
        params={**shop.token, "click_id": shop.click_id, "txid": "T2", "secret": "Q-7"},
    )
    in_form = await client.post(
        shop.url,
        params=shop.token,
        data={"click_id": shop.click_id, "txid": "T3", "secret": "Q-7"},
    )
    wrong = await client.get(
        shop.url, params={**shop.token, "click_id": shop.click_id, "secret": "Q-8"}
    )

    assert [r.json()["status"] for r in (in_header, in_query, in_form)] == ["created"] * 3
    assert wrong.json()["reason"] == "the merchant's secret does not match"
    first, second, third, fourth = await log_entries(db)
    assert ["x-shop-key", MASK] in first["headers"]
    assert first["body"] == f'{{"secret_copy":"{MASK}","count":3,"product":"Q-7x course"}}'
    assert second["query"].endswith(f"&secret={MASK}")
    assert third["body"].endswith(f"&secret={MASK}")
    assert fourth["query"].endswith(f"&secret={MASK}")
    text = await stored_and_shown(client, db, shop)
    for secret in ("Q-7", "Q-8"):
        assert f'"{secret}"' not in text
        assert f"={secret}" not in text


def test_a_short_secret_is_masked_as_a_whole_value_only() -> None:
    assert mask('{"k":"ab1","n":"ab12","m":["ab1"]}', ["ab1"]) == (
        f'{{"k":"{MASK}","n":"ab12","m":["{MASK}"]}}'
    )
    assert mask("a=ab1&b=xab1&c=ab1", ["ab1"]) == f"a={MASK}&b=xab1&c={MASK}"
    assert mask("ab1", ["ab1"]) == MASK
    assert mask('{"pin": 123, "price": 1234}', ["123"]) == f'{{"pin": {MASK}, "price": 1234}}'
