"""The hold period through the API: approved revenue on hold for the workspace's days (or its
merchant's own), available after them; a refund inside the window takes it back; bad days are
refused by the workspace and the merchant alike."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.callers import Caller, make_owner
from tests.web.sales import click, create_merchant, postback
from trilha.db.schema import conversions
from trilha.workspaces import Workspace


async def revenue(client: httpx.AsyncClient, caller: Caller, workspace: Workspace) -> Any:
    response = await client.get(
        f"/api/v1/workspaces/{workspace.id}/reports",
        params={"preset": "last_30_days", "group_by": "merchant"},
        headers=caller.headers,
    )
    assert response.status_code == 200, response.text
    report = response.json()
    names = ("net_revenue", "on_hold_revenue", "available_revenue")
    rows = {row["labels"][0]: tuple(row["metrics"][n] for n in names) for row in report["rows"]}
    return rows, tuple(report["totals"][n] for n in names)


async def test_revenue_waits_out_the_hold_and_a_refund_inside_it_takes_it_back(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    base = f"/api/v1/workspaces/{workspace.id}"
    held = await client.patch(base, json={"hold_days": 14}, headers=owner.headers)
    assert held.status_code == 200, held.text
    assert held.json()["hold_days"] == 14
    await create_merchant(client, owner, workspace, key="curso", preset="generic", name="Curso")
    instant = await create_merchant(
        client, owner, workspace, key="loja", preset="generic", name="Loja", hold_days=0
    )
    assert instant["hold_days"] == 0
    _, click_id = await click(client, db, workspace)
    await postback(client, workspace, "/pb/curso", click_id=click_id, txid="A", payout="100")
    await postback(client, workspace, "/pb/curso", click_id=click_id, txid="OLD", payout="50")
    await postback(client, workspace, "/pb/curso", click_id=click_id, txid="R", payout="30")
    await postback(client, workspace, "/pb/curso", click_id=click_id, txid="R", status="refunded")
    await postback(client, workspace, "/pb/loja", click_id=click_id, txid="B", payout="70")
    async with db.begin() as conn:  # a sale approved 20 days ago: past the 14 days
        days_ago = datetime.now(UTC) - timedelta(days=20)
        await conn.execute(
            update(conversions)
            .where(conversions.c.txid == "OLD")
            .values(created_at=days_ago, status_changed_at=days_ago)
        )

    rows, totals = await revenue(client, owner, workspace)
    assert rows == {
        "Curso": ("150.00", "100.00", "50.00"),  # the refunded 30 is neither
        "Loja": ("70.00", "0.00", "70.00"),  # its own hold: none
    }
    assert totals == ("220.00", "100.00", "120.00")

    await postback(client, workspace, "/pb/curso", click_id=click_id, txid="A", status="refunded")
    rows, totals = await revenue(client, owner, workspace)
    assert rows["Curso"] == ("50.00", "0.00", "50.00")

    await client.patch(base, json={"hold_days": 0}, headers=owner.headers)
    await client.patch(
        f"{base}/merchants/{instant['id']}", json={"hold_days": 30}, headers=owner.headers
    )
    rows, _ = await revenue(client, owner, workspace)
    assert rows == {"Curso": ("50.00", "0.00", "50.00"), "Loja": ("70.00", "70.00", "0.00")}


async def test_hold_days_outside_0_to_365_are_refused(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    base = f"/api/v1/workspaces/{workspace.id}"
    for days in (-1, 366, "x"):
        refused = await client.patch(base, json={"hold_days": days}, headers=owner.headers)
        assert refused.status_code == 422, refused.text
    merchant = await create_merchant(client, owner, workspace, key="m", preset="generic")
    refused = await client.patch(
        f"{base}/merchants/{merchant['id']}", json={"hold_days": 400}, headers=owner.headers
    )
    assert refused.status_code == 422
    cleared = await client.patch(
        f"{base}/merchants/{merchant['id']}", json={"hold_days": None}, headers=owner.headers
    )
    assert cleared.json()["hold_days"] is None
    assert (await client.get(base, headers=owner.headers)).json()["hold_days"] == 0
