"""One destination that hangs never holds everyone's deliveries: claims leave it a few slots,
other workspaces' deliveries go out beside it, and after a few unanswered requests it pauses."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, make_workspace
from trilha.db.schema import delivery_attempts, destinations
from trilha.deliveries.destination import Destination
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.deliveries.lifecycle import UNANSWERED_LIMIT
from trilha.settings import Settings
from trilha.workspaces import Workspace

HANGING_SALES = 300


async def hanging_sales(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver, n: int
) -> Destination:
    """A workspace whose tracker never answers, and ``n`` sales it must be told of."""
    stuck = await make_workspace(db)
    hanging = await make_destination(
        db,
        stuck,
        Spec("Slow tracker", Kind.POSTBACK, receiver.url("/hang?c={conversion_id}")),
        settings=settings,
    )
    click = await click_on(client, db, stuck)
    for sale in range(n):
        await report(client, stuck, click["id"], txid=f"T{sale}")
    return hanging


async def healthy_workspace(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> tuple[Workspace, str]:
    healthy = await make_workspace(db)
    await make_destination(
        db, healthy, Spec("Tracker", Kind.POSTBACK, receiver.url("/ok")), settings=settings
    )
    click = await click_on(client, db, healthy)
    return healthy, str(click["id"])


class TestBesideAHangingHost:
    @pytest.fixture
    def settings(self, settings: Settings) -> Settings:
        """No hanging request times out while the test runs: each slot it takes stays taken."""
        return settings.model_copy(update={"delivery_timeout": 90.0})

    async def test_another_workspaces_delivery_goes_out_while_the_host_hangs(
        self,
        client: httpx.AsyncClient,
        db: AsyncEngine,
        settings: Settings,
        receiver: Receiver,
    ) -> None:
        healthy, click_id = await healthy_workspace(client, db, settings, receiver)
        await hanging_sales(client, db, settings, receiver, HANGING_SALES)

        await report(client, healthy, click_id)
        # Well before any hanging request could time out: every slot but the hanging
        # destination's few was free for it.
        await eventually(lambda: _true(bool(receiver.at("/ok"))), timeout=45.0)

        assert len(receiver.at("/hang")) == settings.delivery_per_destination
        assert await fetch_all(db, delivery_attempts, outcome="temporary") == []


class TestAHostThatStopsAnswering:
    @pytest.fixture
    def settings(self, settings: Settings) -> Settings:
        return settings.model_copy(update={"delivery_timeout": 1.0})

    async def test_gets_one_request_at_a_time_then_pauses(
        self,
        client: httpx.AsyncClient,
        db: AsyncEngine,
        settings: Settings,
        receiver: Receiver,
    ) -> None:
        hanging = await hanging_sales(client, db, settings, receiver, 20)

        async def paused() -> bool:
            [row] = await fetch_all(db, destinations, id=hanging.id)
            return bool(row["paused_until"])

        await eventually(paused, timeout=30.0)
        [row] = await fetch_all(db, destinations, id=hanging.id)
        sent = len(receiver.at("/hang"))
        await asyncio.sleep(4 * settings.delivery_poll_interval + settings.delivery_timeout)

        assert row["unanswered"] >= UNANSWERED_LIMIT
        assert row["paused_until"] > datetime.now(UTC)
        assert sent <= settings.delivery_per_destination  # no more once one went unanswered
        assert len(receiver.at("/hang")) == sent  # and none while it is paused


async def _true(value: bool) -> bool:
    return value
