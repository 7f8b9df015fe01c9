"""Dedupe modes: by transaction id, by click, by time window, or repeats allowed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign, make_workspace, now
from trilha.db.schema import conversions
from trilha.merchants import create_merchant
from trilha.workspaces import Workspace


async def setup(
    client: httpx.AsyncClient, db: AsyncEngine, mode: str, **merchant: object
) -> tuple[Workspace, str]:
    workspace = await make_workspace(db)
    async with db.begin() as conn:
        await create_merchant(
            conn,
            workspace.id,
            key="shop",
            name="Shop",
            preset="generic",
            dedupe_mode=mode,
            now=now(),
            **merchant,
        )
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}")
    [click] = await fetch_clicks(db)
    return workspace, str(click["id"])


async def send(client: httpx.AsyncClient, workspace: Workspace, **params: str) -> str:
    response = await client.get("/pb/shop", params={"token": workspace.postback_token, **params})
    return str(response.json()["status"])


async def test_txid_mode_counts_each_transaction_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace, click = await setup(client, db, "txid")

    outcomes = [
        await send(client, workspace, click_id=click, txid=t, tipo="upsell")
        for t in ("A", "B", "A")
    ]

    assert outcomes == ["created", "created", "duplicate"]


async def test_txid_mode_without_a_txid_counts_once_per_click_and_event(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace, click = await setup(client, db, "txid")

    outcomes = [
        await send(client, workspace, click_id=click, tipo=t) for t in ("lead", "lead", "venda")
    ]

    assert outcomes == ["created", "duplicate", "created"]


async def test_click_mode_ignores_new_transaction_ids(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace, click = await setup(client, db, "click")

    outcomes = [await send(client, workspace, click_id=click, txid=t) for t in ("A", "B")]

    assert outcomes == ["created", "duplicate"]
    assert len(await fetch_all(db, conversions)) == 1


async def test_window_mode_counts_again_after_the_window(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace, click = await setup(client, db, "window", dedupe_window_minutes=30)

    first = await send(client, workspace, click_id=click, txid="A")
    within = await send(client, workspace, click_id=click, txid="B")
    async with db.begin() as conn:
        await conn.execute(
            update(conversions).values(created_at=datetime.now(UTC) - timedelta(minutes=31))
        )
    after = await send(client, workspace, click_id=click, txid="C")

    assert (first, within, after) == ("created", "duplicate", "created")
    assert len(await fetch_all(db, conversions)) == 2


async def test_allow_repeats_counts_every_new_transaction(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace, click = await setup(client, db, "allow_repeats")

    outcomes = [
        await send(client, workspace, click_id=click, txid=t, tipo="upsell")
        for t in ("A", "B", "C", "C")
    ]

    assert outcomes == ["created", "created", "created", "duplicate"]


@pytest.mark.parametrize("mode", ["txid", "click", "window", "allow_repeats"])
async def test_every_mode_applies_a_refund_to_the_conversion_it_repeats(
    client: httpx.AsyncClient, db: AsyncEngine, mode: str
) -> None:
    workspace, click = await setup(client, db, mode)

    created = await send(client, workspace, click_id=click, txid="A", payout="50")
    refunded = await send(
        client, workspace, click_id=click, txid="A", payout="50", status="refunded"
    )

    assert (created, refunded) == ("created", "status_changed")
    [conversion] = await fetch_all(db, conversions)
    assert conversion["status"] == "refunded"
