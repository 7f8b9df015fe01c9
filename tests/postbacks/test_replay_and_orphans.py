"""Fixing a mapping, then replaying what failed; orphans finding their click later."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign, make_workspace, now
from trilha.conversions.orphans import attach_orphan, attach_orphans
from trilha.db.schema import clicks, conversions, postback_log
from trilha.errors import InvalidInput, NotFound
from trilha.event_types import create_event_type
from trilha.merchants import create_merchant
from trilha.postbacks.replay import replay_postbacks


async def test_replaying_after_adding_the_missing_event_type_creates_the_conversion(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}")
    [click] = await fetch_clicks(db)
    failed = await client.get(
        "/pb",
        params={
            "token": workspace.postback_token,
            "click_id": click["id"],
            "tipo": "trial",
            "txid": "T1",
        },
    )
    assert failed.json()["status"] == "invalid"
    async with db.begin() as conn:
        await create_event_type(
            conn,
            workspace.id,
            name="TRIAL",
            counts_as_conversion=True,
            counts_as_revenue=False,
            now=now(),
        )

    async with db.begin() as conn:
        [result] = await replay_postbacks(
            conn, workspace.id, [failed.json()["postback_id"]], now=now()
        )
    async with db.begin() as conn:
        [again] = await replay_postbacks(
            conn, workspace.id, [failed.json()["postback_id"]], now=now()
        )

    assert (result.outcome, result.event_type) == ("created", "TRIAL")
    assert again.outcome == "duplicate"
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] == click["id"]
    entries = await fetch_all(db, postback_log)
    assert len(entries) == 3
    original = next(e for e in entries if e["id"] == failed.json()["postback_id"])
    assert original["outcome"] == "invalid"  # history is never rewritten
    assert sorted(e["replay_of"] or "" for e in entries) == ["", original["id"], original["id"]]


async def test_replay_refuses_requests_that_failed_authentication(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    async with db.begin() as conn:
        await create_merchant(
            conn,
            workspace.id,
            key="shop",
            name="Shop",
            preset="generic",
            secret="s3cret-value-Jd82w",
            now=now(),
        )
    response = await client.get(
        "/pb/shop",
        params={"token": workspace.postback_token, "click_id": "c", "secret": "wrong-guess"},
    )
    assert response.status_code == 401

    async with db.begin() as conn:
        with pytest.raises(InvalidInput, match="secret check"):
            await replay_postbacks(conn, workspace.id, [response.json()["postback_id"]], now=now())


async def test_replay_accepts_only_invalid_or_orphan_entries_of_the_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    other = await make_workspace(db)
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}")
    [click] = await fetch_clicks(db)
    created = await client.get(
        "/pb", params={"token": workspace.postback_token, "click_id": click["id"], "txid": "T"}
    )

    async with db.begin() as conn:
        with pytest.raises(InvalidInput, match="only invalid or orphan"):
            await replay_postbacks(conn, workspace.id, [created.json()["postback_id"]], now=now())
    async with db.begin() as conn:
        with pytest.raises(NotFound):
            await replay_postbacks(conn, other.id, [created.json()["postback_id"]], now=now())


async def test_an_orphan_is_attached_when_its_click_appears(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}")
    [click] = await fetch_clicks(db)
    # The click id arrives before its click is in the database (e.g. clicks imported later).
    async with db.begin() as conn:
        await conn.execute(update(clicks).values(id="HIDDEN"))
    orphan = await client.get(
        "/pb", params={"token": workspace.postback_token, "click_id": click["id"], "txid": "T1"}
    )
    assert orphan.json()["status"] == "orphan"
    async with db.begin() as conn:
        await conn.execute(update(clicks).where(clicks.c.id == "HIDDEN").values(id=click["id"]))

    async with db.begin() as conn:
        attached = await conn.run_sync(attach_orphans, now=now())

    assert attached == 1
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["click_id"], conversion["campaign_id"]) == (click["id"], campaign.id)
    assert conversion["attached_at"] is not None


async def test_an_orphan_can_be_attached_by_hand(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}")
    [click] = await fetch_clicks(db)
    orphan = await client.get(
        "/pb", params={"token": workspace.postback_token, "click_id": "from-email", "txid": "T1"}
    )

    async with db.begin() as conn:
        with pytest.raises(InvalidInput, match="no click"):
            await conn.run_sync(
                attach_orphan, workspace.id, orphan.json()["conversion_id"], "nope", now=now()
            )
    async with db.begin() as conn:
        await conn.run_sync(
            attach_orphan, workspace.id, orphan.json()["conversion_id"], click["id"], now=now()
        )

    [conversion] = await fetch_all(db, conversions)
    assert (conversion["click_id"], conversion["raw_click_id"]) == (click["id"], "from-email")
