"""The members section of the dashboard keeps a workspace's last owner, even under concurrency."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_user, make_workspace
from tests.web.browsers import signed_in
from tests.web.callers import join
from trilha.accounts import User
from trilha.app import TrilhaApp
from trilha.db.schema import memberships
from trilha.workspaces import Role, Workspace


async def _step_down(
    app: TrilhaApp, db: AsyncEngine, me: User, other: User, workspace: Workspace, move: str
) -> httpx.Response:
    client, csrf = await signed_in(app, db, me)
    async with client:
        base = f"/w/{workspace.id}/members"
        if move == "leave":
            return await client.post(f"{base}/{me.id}/delete", data={"csrf_token": csrf})
        return await client.post(
            f"{base}/{other.id}/role", data={"csrf_token": csrf, "role": "viewer"}
        )


@pytest.mark.parametrize("move", ["demote the other", "leave"])
async def test_two_owners_stepping_down_at_once_leave_one_owner(
    app: TrilhaApp, db: AsyncEngine, move: str
) -> None:
    pairs = []
    for _ in range(6):
        first, second = await make_user(db), await make_user(db)
        workspace = await make_workspace(db, owner=first)
        await join(db, workspace, second, Role.OWNER)
        pairs.append((first, second, workspace))

    responses = await asyncio.gather(
        *(_step_down(app, db, a, b, w, move) for a, b, w in pairs),
        *(_step_down(app, db, b, a, w, move) for a, b, w in pairs),
    )

    assert all(response.status_code in (303, 403) for response in responses)
    for _, _, workspace in pairs:
        rows = await fetch_all(db, memberships, workspace_id=workspace.id)
        assert [row["role"] for row in rows].count("owner") == 1
