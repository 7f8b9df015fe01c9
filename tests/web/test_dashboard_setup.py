"""The one-time setup link, used by many at once: one owner, one workspace, the rest refused."""

from __future__ import annotations

import asyncio

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, now
from tests.web.browsers import post_form
from trilha.accounts import create_setup_token
from trilha.app import TrilhaApp
from trilha.db.schema import memberships, setup_tokens, users, workspaces


async def _use_link(app: TrilhaApp, token: str, n: int) -> httpx.Response:
    form = {
        "email": f"owner{n}@example.com",
        "user_name": f"Owner {n}",
        "password": "uma senha bem longa",
        "name": f"Loja {n}",
    }
    return await post_form(app, f"/setup/{token}", form)


async def test_twenty_concurrent_uses_of_the_setup_link_make_one_owner(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    async with db.begin() as conn:
        token = await create_setup_token(conn, now=now())

    responses = await asyncio.gather(*(_use_link(app, token, n) for n in range(20)))

    statuses = sorted(response.status_code for response in responses)
    assert statuses == [303] + [404] * 19
    refused = [response for response in responses if response.status_code == 404]
    assert all('id="setup-invalid"' in response.text for response in refused)
    assert len(await fetch_all(db, users)) == 1
    assert len(await fetch_all(db, workspaces)) == 1
    [membership] = await fetch_all(db, memberships)
    assert membership["role"] == "owner"
    assert all(row["used_at"] is not None for row in await fetch_all(db, setup_tokens))
