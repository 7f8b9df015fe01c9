"""The rules of a delivery's life: the schedule's end, three days of temporary failures, and
the attempt log's retention."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, make_workspace
from trilha.db.schema import delivery_attempts, destinations, notices
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import AttemptOutcome, DeliveryState, Kind
from trilha.deliveries.lifecycle import delivery_change, purge_attempts
from trilha.deliveries.schedule import MAX_ATTEMPTS, RETRY_SCHEDULE
from trilha.deliveries.send import Sent
from trilha.settings import Settings

T0 = datetime(2026, 12, 1, tzinfo=UTC)
TIMEOUT = Sent(AttemptOutcome.TEMPORARY, "GET /", error="timed out")


def test_the_schedule_spans_about_three_days() -> None:
    assert timedelta(days=2, hours=18) < sum(RETRY_SCHEDULE, timedelta(0)) < timedelta(days=3)


def test_a_temporary_failure_waits_its_turn_with_jitter() -> None:
    early = delivery_change(3, TIMEOUT, now=T0, spread=-1)
    late = delivery_change(3, TIMEOUT, now=T0, spread=1)

    assert early["next_attempt_at"] == T0 + timedelta(minutes=4)
    assert late["next_attempt_at"] == T0 + timedelta(minutes=6)
    assert "state" not in early


def test_the_last_attempt_fails_the_delivery() -> None:
    change = delivery_change(MAX_ATTEMPTS, TIMEOUT, now=T0, spread=0)

    assert (change["state"], change["finished_at"], change["last_error"]) == (
        DeliveryState.FAILED,
        T0,
        "timed out",
    )


async def test_three_days_of_server_errors_switch_a_destination_off(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    destination = await make_destination(
        db, workspace, Spec("Down", Kind.POSTBACK, receiver.url("/500")), settings=settings
    )
    since = datetime.now(UTC) - timedelta(days=3, minutes=1)
    async with db.begin() as conn:
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == destination.id)
            .values(failing_since=since)
        )
    click = await click_on(client, db, workspace)

    await report(client, workspace, click["id"])

    async def switched_off() -> bool:
        [row] = await fetch_all(db, destinations, id=destination.id)
        return bool(row["status"] == "inactive")

    await eventually(switched_off)
    [row] = await fetch_all(db, destinations, id=destination.id)
    assert row["status_reason"] == (
        f"only timeouts and server errors since {since:%Y-%m-%d %H:%M} UTC"
    )
    [notice] = await fetch_all(db, notices)
    assert notice["destination_id"] == destination.id


async def test_a_success_ends_a_run_of_temporary_failures(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    destination = await make_destination(
        db, workspace, Spec("Up", Kind.POSTBACK, receiver.url("/ok")), settings=settings
    )
    async with db.begin() as conn:
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == destination.id)
            .values(failing_since=datetime.now(UTC), consecutive_failures=4)
        )
    click = await click_on(client, db, workspace)

    await report(client, workspace, click["id"])

    async def reset() -> bool:
        [row] = await fetch_all(db, destinations, id=destination.id)
        return row["failing_since"] is None and row["consecutive_failures"] == 0

    await eventually(reset)


async def test_old_attempts_are_purged(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    await make_destination(
        db, workspace, Spec("T", Kind.POSTBACK, receiver.url("/ok")), settings=settings
    )
    click = await click_on(client, db, workspace)
    await report(client, workspace, click["id"])

    async def recorded() -> bool:
        return bool(await fetch_all(db, delivery_attempts))

    await eventually(recorded)
    [attempt] = await fetch_all(db, delivery_attempts)
    async with db.begin() as conn:
        kept = await purge_attempts(conn, older_than=attempt["started_at"], limit=10)
        purged = await purge_attempts(
            conn, older_than=attempt["started_at"] + timedelta(microseconds=1), limit=10
        )
    assert (kept, purged) == (0, 1)
    assert await fetch_all(db, delivery_attempts) == []
