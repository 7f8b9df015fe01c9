"""One destination that hangs never holds everyone's deliveries: claims leave it a few slots,
other workspaces' deliveries go out beside it, and after a few unanswered requests it pauses."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, make_workspace
from trilha.db.schema import delivery_attempts, destinations
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.deliveries.lifecycle import UNANSWERED_LIMIT
from trilha.settings import Settings

HANGING_SALES = 300


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """A timeout long enough that no slot frees up while the healthy delivery is awaited."""
    return settings.model_copy(update={"delivery_timeout": 6.0})


async def test_a_hanging_destination_leaves_another_workspace_its_delivery(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    stuck, healthy = await make_workspace(db), await make_workspace(db)
    hanging = await make_destination(
        db,
        stuck,
        Spec("Slow tracker", Kind.POSTBACK, receiver.url("/hang?c={conversion_id}")),
        settings=settings,
    )
    await make_destination(
        db, healthy, Spec("Tracker", Kind.POSTBACK, receiver.url("/ok")), settings=settings
    )
    stuck_click, healthy_click = (
        await click_on(client, db, stuck),
        await click_on(client, db, healthy),
    )
    for n in range(HANGING_SALES):
        await report(client, stuck, stuck_click["id"], txid=f"T{n}")

    await report(client, healthy, healthy_click["id"])
    await eventually(lambda: _true(bool(receiver.at("/ok"))), timeout=4.0)

    # Every slot but the destination's few was free: the healthy sale went out while the
    # hanging requests still hung, none of them answered yet.
    assert len(receiver.at("/hang")) == settings.delivery_per_destination
    assert await fetch_all(db, delivery_attempts, outcome="temporary") == []

    async def timed_out() -> bool:
        found = await fetch_all(db, delivery_attempts, outcome="temporary")
        return len(found) == settings.delivery_per_destination

    await eventually(timed_out, timeout=15.0)
    [row] = await fetch_all(db, destinations, id=hanging.id)
    assert row["unanswered"] >= UNANSWERED_LIMIT
    assert row["paused_until"] > datetime.now(UTC)
    assert len(receiver.at("/hang")) == settings.delivery_per_destination  # paused: no more


async def _true(value: bool) -> bool:
    return value
