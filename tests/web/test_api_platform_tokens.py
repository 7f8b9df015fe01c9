"""A merchant takes the token its platform issues, as the platform issues it: a Kiwify merchant
with Kiwify's 11-character token is created and its signed sales count. Only a secret a person
makes up (the generic preset's) must have 16 characters."""

from __future__ import annotations

import json

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import make_owner
from tests.web.sales import click, create_merchant
from trilha.db.schema import conversions, merchants
from trilha.merchants import MIN_SECRET
from trilha.postbacks.platforms import PRESETS
from trilha.postbacks.preset import SecretOrigin

# A token of the shape each platform issues (length, alphabet), from its documentation or, where
# that is silent, from integrations that show one.
ISSUED = {
    "hotmart": "azjZzEUU43jb4zN4NqEUrvRu1MO1XQ1167719",
    "kiwify": "rxue90njjv1",
    "monetizze": "7f3c2a9be1d84c05a6b2e3f4d5c6b7a8",
    "braip": "b5e1D0c8A3f24E9e8C7d6B5a4F3e2D1c0B9a8F7e",
    "eduzz": "4b1e7f9a2c3d5e6f7a8b9c0d1e2f3a4b",
    "eduzz_v3": "edz_whsec_3Xk9QmZ2pL7vN4tR8yW1",
    "perfectpay": "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6",
    "ticto": "tCt0Kn2aB9xYz7Qw",
    "greenn": "gr33nToken8Hk2",
    "cakto": "0f6f4d7e-5b8a-4c1d-9e2f-3a4b5c6d7e8f",
    "kirvano": "minhaloja22",  # typed by the producer in Kirvano's panel
    "hubla": "hb_7QmZ2pL7vN4tR8yW1Xk9eSs",
    "lastlink": "c0a8f3e2-77b1-4d9a-bf2e-1d6c5a4e3f21",
    "payt": "9e107d9d372bb6826bd81d3542a419d6",
    # Doppus shows the token in its panel; no integration shows one, so its shape is a guess.
    "doppus": "dp7Qx2mK9vL4tR8wZ3nB6cY1",
}


def test_every_platform_issued_preset_has_a_token_shape_here() -> None:
    issued = {n for n, p in PRESETS.items() if p.secret_origin is SecretOrigin.PLATFORM}
    assert issued == set(ISSUED)
    assert PRESETS["generic"].secret_origin is SecretOrigin.PERSON


@pytest.mark.parametrize("preset", list(ISSUED))
async def test_the_platforms_own_token_makes_a_merchant_whose_sales_count(
    client: httpx.AsyncClient, db: AsyncEngine, preset: str
) -> None:
    token = ISSUED[preset]
    owner, workspace = await make_owner(db)

    merchant = await create_merchant(
        client, owner, workspace, key=preset, preset=preset, secret=token
    )
    _, click_id = await click(client, db, workspace)
    sale = await client.post(
        f"/api/v1/workspaces/{workspace.id}/merchants/{merchant['id']}/test",
        json={"event_type": "SALE", "status": "approved", "value": "97.00", "click_id": click_id},
        headers=owner.headers,
    )

    short = len(token) < MIN_SECRET
    assert merchant["warnings"] == (["short_secret"] if short else [])
    assert (sale.status_code, sale.json()["outcome"]) == (200, "created"), sale.text
    [row] = await fetch_all(db, merchants)
    assert row["secret"] == token
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] == click_id


async def test_a_kiwify_merchant_refuses_a_sale_signed_with_another_token(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await create_merchant(
        client, owner, workspace, key="kiwify", preset="kiwify", secret="rxue90njjv1"
    )
    _, click_id = await click(client, db, workspace)
    body = json.dumps(
        {
            "order_id": "o1",
            "webhook_event_type": "order_approved",
            "Commissions": {"charge_amount": 9700},
            "TrackingParameters": {"sck": click_id},
        }
    ).encode()

    forged = await client.post(
        "/pb/kiwify",
        params={"token": workspace.postback_token, "signature": "0" * 40},
        content=body,
        headers={"Content-Type": "application/json"},
    )

    assert forged.status_code == 401
    assert await fetch_all(db, conversions) == []


@pytest.mark.parametrize("preset", ["kiwify", "cakto"])
async def test_a_platforms_token_is_changed_to_another_as_issued(
    client: httpx.AsyncClient, db: AsyncEngine, preset: str
) -> None:
    owner, workspace = await make_owner(db)
    made = await create_merchant(client, owner, workspace, key=preset, preset=preset)
    url = f"/api/v1/workspaces/{workspace.id}/merchants/{made['id']}"

    changed = await client.patch(url, json={"secret": " t3st0k3nkw1 "}, headers=owner.headers)
    to_generic = await client.patch(
        url, json={"preset": "generic", "secret": "t3st0k3nkw2"}, headers=owner.headers
    )

    assert (changed.status_code, changed.json()["warnings"]) == (200, ["short_secret"])
    assert to_generic.status_code == 422
    assert to_generic.json()["errors"] == {"secret": "must be at least 16 characters"}
    [row] = await fetch_all(db, merchants)
    assert (row["preset"], row["secret"]) == (preset, "t3st0k3nkw1")
