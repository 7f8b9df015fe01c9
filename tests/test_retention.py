"""TRILHA_CLICK_RETENTION_DAYS: raw clicks past it go in small batches; converted clicks stay,
and the rollups keep counting every click for the reports of old periods."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign
from tests.web.callers import make_owner
from tests.web.sales import click, postback
from trilha.campaigns import Campaign
from trilha.click_retention import all_kept_since, purge_clicks, purge_old_clicks
from trilha.db import batches
from trilha.db.schema import click_hours, click_sub1_days, clicks, conversions, postback_log
from trilha.ids import mint_click_id
from trilha.maintenance import purge_expired_clicks, purge_old_rows
from trilha.postbacks.log import purge_log
from trilha.reports.rollups import rebuild_rollups
from trilha.settings import Settings
from trilha.workspaces import Workspace

RETENTION = timedelta(days=30)


async def clicks_aged(
    client: httpx.AsyncClient, db: AsyncEngine, workspace: Workspace, campaign: Campaign, *,
    count: int, age: timedelta,
) -> list[str]:  # fmt: skip
    """``count`` clicks through /r/{slug}, then made ``age`` old (their ids too: ids sort by
    time), their rollups recounted; their ids."""
    made = datetime.now(UTC) - age
    aged = []
    for _ in range(count):
        _, click_id = await click(client, db, workspace, campaign)
        new_id = mint_click_id(made)
        async with db.begin() as conn:
            await conn.execute(
                update(clicks).where(clicks.c.id == click_id).values(id=new_id, created_at=made)
            )
        aged.append(new_id)
    async with db.begin() as conn:
        await conn.run_sync(rebuild_rollups, workspace_id=workspace.id)
    return aged


async def rollup_clicks(db: AsyncEngine) -> tuple[int, int]:
    async with db.connect() as conn:
        hours = (await conn.execute(select(func.sum(click_hours.c.clicks)))).scalar_one()
        days = (await conn.execute(select(func.sum(click_sub1_days.c.clicks)))).scalar_one()
    return int(hours), int(days)


async def test_old_unconverted_clicks_go_and_reports_keep_counting_them(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db, timezone="UTC")
    campaign = await make_campaign(db, workspace)
    old = await clicks_aged(client, db, workspace, campaign, count=5, age=timedelta(days=40))
    new = await clicks_aged(client, db, workspace, campaign, count=3, age=timedelta(days=2))
    sold = await postback(client, workspace, click_id=old[0], txid="T1", payout="97,00")
    assert sold["status"] == "created", sold
    before = await rollup_clicks(db)

    purged = await purge_old_clicks(db, older_than=datetime.now(UTC) - RETENTION)

    assert purged == 4
    kept = {row["id"] for row in await fetch_clicks(db)}
    assert kept == {old[0], *new}
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] == old[0]
    assert await rollup_clicks(db) == before == (8, 8)
    forty_days_ago = (datetime.now(UTC) - timedelta(days=40)).date().isoformat()
    response = await client.get(
        f"/api/v1/workspaces/{workspace.id}/reports",
        params={"preset": "custom", "first": forty_days_ago, "last": forty_days_ago},
        headers=owner.headers,
    )
    assert response.status_code == 200, response.text
    totals = response.json()["totals"]
    assert totals["clicks"] == 5  # the sale counts on its own day, today


async def test_a_rebuild_of_the_rollups_leaves_the_purged_days_sums(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await clicks_aged(client, db, workspace, campaign, count=3, age=timedelta(days=40))
    await clicks_aged(client, db, workspace, campaign, count=2, age=timedelta(days=2))
    await purge_old_clicks(db, older_than=datetime.now(UTC) - RETENTION)

    async with db.begin() as conn:
        since = all_kept_since(datetime.now(UTC), RETENTION.days)
        await conn.run_sync(rebuild_rollups, since=since)

    assert len(await fetch_clicks(db)) == 2
    assert await rollup_clicks(db) == (5, 5)


async def test_it_purges_a_batch_per_call_and_goes_on_after_the_last(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    old = await clicks_aged(client, db, workspace, campaign, count=5, age=timedelta(days=40))
    older_than = datetime.now(UTC) - RETENTION

    ids = sorted(old)
    async with db.begin() as conn:
        first = await conn.run_sync(purge_clicks, older_than=older_than, limit=2)
    async with db.begin() as conn:
        second = await conn.run_sync(purge_clicks, older_than=older_than, after=ids[1], limit=2)
    async with db.begin() as conn:
        last = await conn.run_sync(purge_clicks, older_than=older_than, after=ids[3], limit=2)

    assert (first, second, last) == ((2, ids[1]), (2, ids[3]), (1, None))
    assert await fetch_clicks(db) == []


async def test_clicks_within_the_retention_stay(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await clicks_aged(client, db, workspace, campaign, count=2, age=timedelta(days=29))

    purged = await purge_old_clicks(db, older_than=datetime.now(UTC) - RETENTION)

    assert purged == 0
    assert len(await fetch_clicks(db)) == 2


async def test_the_serving_process_purges_only_when_a_retention_is_set(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await clicks_aged(client, db, workspace, campaign, count=2, age=timedelta(days=400))

    await purge_expired_clicks(db, days=0)
    assert len(await fetch_clicks(db)) == 2
    await purge_expired_clicks(db, days=365)
    assert await fetch_clicks(db) == []


async def test_old_log_entries_and_payloads_go_a_batch_per_transaction(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, workspace = await make_owner(db)
    for txid in ("T1", "T2", "T3", "T4"):
        await postback(client, workspace, click_id="NOSUCHCLICK", txid=txid)
    entries = sorted(await fetch_all(db, postback_log), key=lambda entry: entry["txid"])
    ages = {"T1": 100, "T2": 100, "T3": 40, "T4": 0}  # days: past the log's 90, the payload's 30
    async with db.begin() as conn:
        for entry in entries:
            received = datetime.now(UTC) - timedelta(days=ages[entry["txid"]], minutes=1)
            await conn.execute(
                update(postback_log)
                .where(postback_log.c.id == entry["id"])
                .values(received_at=received)
            )
        one = await purge_log(conn, older_than=datetime.now(UTC) - timedelta(days=90), limit=1)
    assert one == 1
    monkeypatch.setattr(batches, "PURGE_BATCH", 1)

    await purge_old_rows(db, settings)

    left = {entry["txid"]: entry for entry in await fetch_all(db, postback_log)}
    assert set(left) == {"T3", "T4"}
    assert (left["T3"]["query"], left["T3"]["payload_purged_at"] is None) == ("", False)
    assert "NOSUCHCLICK" in left["T4"]["query"]
