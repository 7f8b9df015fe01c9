"""A merchant's secret has at least 16 characters when it is set; one stored before that rule
keeps authenticating, and the merchant's answer warns about it."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import make_owner
from tests.web.sales import click, create_merchant
from trilha.db.schema import merchants

LONG = "Pq7-secret-of-22-chars"


def merchants_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/merchants"


@pytest.mark.parametrize("secret", ["Sh0rtSecr3", "  fifteen-chars-x  "])
async def test_a_new_merchant_with_a_short_secret_is_refused_naming_the_field(
    client: httpx.AsyncClient, db: AsyncEngine, secret: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        merchants_url(workspace.id),
        json={"key": "loja", "name": "Loja", "preset": "generic", "secret": secret},
        headers=owner.headers,
    )

    assert response.status_code == 422
    assert response.json()["errors"] == {"secret": "must be at least 16 characters"}
    assert await fetch_all(db, merchants) == []


async def test_a_secret_is_changed_only_to_a_long_enough_one(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    made = await create_merchant(
        client, owner, workspace, key="loja", preset="generic", secret=" " + LONG + " "
    )
    url = f"{merchants_url(workspace.id)}/{made['id']}"

    short = await client.patch(url, json={"secret": "abc"}, headers=owner.headers)
    longer = await client.patch(url, json={"secret": LONG + "-2"}, headers=owner.headers)

    assert short.status_code == 422
    assert "secret" in short.json()["errors"]
    assert (longer.status_code, longer.json()["warnings"]) == (200, [])
    [row] = await fetch_all(db, merchants)
    assert row["secret"] == LONG + "-2"


async def test_an_existing_short_secret_still_authenticates_and_is_warned_about(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    made = await create_merchant(client, owner, workspace, key="loja", preset="generic")
    async with db.begin() as conn:
        await conn.execute(update(merchants).values(secret="abc"))
    url = f"{merchants_url(workspace.id)}/{made['id']}"
    _, click_id = await click(client, db, workspace)

    shown = await client.get(url, headers=owner.headers)
    listed = await client.get(merchants_url(workspace.id), headers=owner.headers)
    renamed = await client.patch(url, json={"name": "Loja nova"}, headers=owner.headers)
    sale = await client.get(
        "/pb/loja",
        params={"token": workspace.postback_token, "click_id": click_id, "secret": "abc"},
    )
    refused = await client.get(
        "/pb/loja",
        params={"token": workspace.postback_token, "click_id": click_id, "secret": "abd"},
    )

    assert (shown.json()["has_secret"], shown.json()["warnings"]) == (True, ["short_secret"])
    assert listed.json()[0]["warnings"] == ["short_secret"]
    assert (renamed.status_code, renamed.json()["warnings"]) == (200, ["short_secret"])
    assert sale.json()["status"] == "created"
    assert refused.status_code == 401
    [row] = await fetch_all(db, merchants)
    assert row["secret"] == "abc"


async def test_the_openapi_document_states_the_secret_rule_and_the_warnings(
    client: httpx.AsyncClient,
) -> None:
    schemas = (await client.get("/api/openapi.json")).json()["components"]["schemas"]

    assert "16" in schemas["MerchantIn"]["properties"]["secret"]["description"]
    warnings = schemas["MerchantOut"]["properties"]["warnings"]
    assert "short_secret" in warnings["description"]
    assert "warnings" in schemas["MerchantOut"]["required"]
