"""Clicks in a partition a month on PostgreSQL: the migration converts a populated table, the
worker creates the months ahead, a click no month covers lands in the default partition, and
retention drops a whole month but its converted clicks.

These tests run on a PostgreSQL database of their own whichever database the run is on, so that
a run on SQLite checks them too."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

import httpx
import pytest
from alembic import command
from sqlalchemy import create_engine, insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import _admin
from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.factories import fetch_all, make_campaign, make_workspace
from tests.test_retention import RETENTION, clicks_aged, rollup_clicks
from tests.web.callers import make_owner
from tests.web.sales import click, postback
from trilha.click_retention import purge_old_clicks
from trilha.db.migrate import alembic_config, migrate
from trilha.db.partitions import (
    ATTEMPTS,
    CLICKS,
    Month,
    create_partition,
    drop_expired_partitions,
    ensure_partitions,
    months,
    validate_references,
)
from trilha.db.schema import clicks, conversions, deliveries, delivery_attempts
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.deliveries.worker import DeliveryWorker
from trilha.ids import RANDOM_ID_CHARS, click_ids_from, random_base62
from trilha.settings import Settings

ADMIN_URL = os.environ.get(
    "TRILHA_TEST_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1/test"
)


@pytest.fixture
def database_url() -> Iterator[str]:
    """A migrated PostgreSQL database of its own, for this module's tests and their app."""
    name = f"trilha_test_{uuid4().hex[:12]}"
    with _admin(ADMIN_URL) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    migrate(url)
    yield url
    with _admin(ADMIN_URL) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def one(db: AsyncEngine, sql: str, **params: Any) -> Any:
    async with db.connect() as conn:
        return (await conn.execute(text(sql), params)).scalar()


async def month_names(db: AsyncEngine) -> set[str]:
    async with db.connect() as conn:
        return {CLICKS.partition(month) for month in await conn.run_sync(months, CLICKS)}


async def partition_of(db: AsyncEngine, click_id: str) -> str:
    found: str = await one(
        db, "SELECT tableoid::regclass::text FROM clicks WHERE id = :id", id=click_id
    )
    return found


async def reference_checked(db: AsyncEngine) -> bool:
    """Whether conversions' reference to clicks is there, whole and checked."""
    checked: bool = await one(
        db,
        "SELECT convalidated FROM pg_constraint WHERE conname = :name AND conparentid = 0"
        " AND confdeltype = 'n' AND confrelid = 'clicks'::regclass",
        name="fk_conversions_click_id_clicks",
    )
    return checked


async def drop_months(db: AsyncEngine, *drop: Month) -> None:
    async with db.begin() as conn:
        for month in drop:
            await conn.execute(
                text(f"ALTER TABLE clicks DETACH PARTITION {CLICKS.partition(month)}")
            )
            await conn.execute(text(f"DROP TABLE {CLICKS.partition(month)}"))


def downgrade(url: str, revision: str) -> None:
    config = alembic_config(url)
    engine = create_engine(config.attributes["url"])
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, revision)
    finally:
        engine.dispose()


async def test_the_migration_partitions_a_populated_table_by_month(
    client: httpx.AsyncClient, db: AsyncEngine, database_url: str
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    campaign = await make_campaign(db, workspace)
    old = await clicks_aged(client, db, workspace, campaign, count=2, age=timedelta(days=70))
    new = await clicks_aged(client, db, workspace, campaign, count=3, age=timedelta(0))
    sold = await postback(client, workspace, click_id=old[0], txid="T1", payout="97,00")
    assert sold["status"] == "created", sold
    # In a thread: the app's worker, on this event loop, must be able to end its transactions.
    await asyncio.to_thread(downgrade, database_url, "0021")
    assert await one(db, "SELECT relkind FROM pg_class WHERE relname = 'clicks'") == "r"

    await asyncio.to_thread(migrate, database_url)

    assert await one(db, "SELECT relkind FROM pg_class WHERE relname = 'clicks'") == "p"
    assert {row["id"] for row in await fetch_all(db, clicks)} == {*old, *new}
    now, then = Month.of(datetime.now(UTC)), Month.of(datetime.now(UTC) - timedelta(days=70))
    wanted, month = set(), then
    while month != now.next().next().next():
        wanted.add(CLICKS.partition(month))
        month = month.next()
    assert await month_names(db) == wanted
    assert {await partition_of(db, click_id) for click_id in old} == {CLICKS.partition(then)}
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] == old[0]
    assert await reference_checked(db)
    async with db.connect() as conn:
        plan = "\n".join(
            (
                await conn.execute(
                    text("EXPLAIN SELECT * FROM clicks WHERE id = :id"), {"id": old[1]}
                )
            ).scalars()
        )
    scanned = {name for name in wanted | {CLICKS.default} if name in plan}
    assert scanned == {CLICKS.partition(then)}, plan


async def test_the_worker_creates_this_month_and_the_two_after(
    db: AsyncEngine, settings: Settings
) -> None:
    this = Month.of(datetime.now(UTC))
    ahead = [this.next(), this.next().next()]
    await drop_months(db, *ahead)
    assert await month_names(db) == {CLICKS.partition(this)}
    worker = DeliveryWorker(db, settings)
    worker.start()

    async def created() -> bool:
        return await month_names(db) == {
            CLICKS.partition(this),
            *(CLICKS.partition(month) for month in ahead),
        }

    try:
        await eventually(created)
    finally:
        await worker.stop()


async def test_a_click_no_month_covers_lands_in_the_default_partition_then_moves_in(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    this = Month.of(datetime.now(UTC))
    await drop_months(db, this)

    _, click_id = await click(client, db, workspace)
    sold = await postback(client, workspace, click_id=click_id, txid="T1", payout="97,00")

    assert sold["status"] == "created", sold
    assert await partition_of(db, click_id) == CLICKS.default
    async with db.begin() as conn:
        created = await conn.run_sync(ensure_partitions, now=datetime.now(UTC))
    assert created == [CLICKS.partition(this)]
    assert await partition_of(db, click_id) == CLICKS.partition(this)
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] == click_id
    async with db.begin() as conn:
        await conn.run_sync(validate_references)
    assert await reference_checked(db)


async def test_retention_drops_a_past_month_whole_but_its_converted_clicks(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    campaign = await make_campaign(db, workspace)
    past = Month.of(datetime.now(UTC) - timedelta(days=75))
    async with db.begin() as conn:
        await conn.run_sync(create_partition, CLICKS, past)
    old = await clicks_aged(client, db, workspace, campaign, count=4, age=timedelta(days=75))
    new = await clicks_aged(client, db, workspace, campaign, count=2, age=timedelta(0))
    sold = await postback(client, workspace, click_id=old[0], txid="T1", payout="97,00")
    assert sold["status"] == "created", sold
    assert {await partition_of(db, click_id) for click_id in old} == {CLICKS.partition(past)}
    before = await rollup_clicks(db)

    purged = await purge_old_clicks(db, older_than=datetime.now(UTC) - RETENTION)

    assert purged == 0  # no batch needed: the month went whole
    assert CLICKS.partition(past) not in await month_names(db)
    assert {row["id"] for row in await fetch_all(db, clicks)} == {old[0], *new}
    assert await partition_of(db, old[0]) == CLICKS.default
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] == old[0]
    assert await reference_checked(db)
    assert await rollup_clicks(db) == before == (6, 6)


async def test_the_worker_drops_a_past_month_of_delivery_attempts_whole(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    spec = Spec("Tracker", Kind.POSTBACK, "http://127.0.0.1:9/pb?c={conversion_id}")
    local = settings.model_copy(update={"delivery_allow_private": True})
    await make_destination(db, workspace, spec, settings=local)
    sale = await click_on(client, db, workspace)
    await report(client, workspace, sale["id"])
    [delivery] = await fetch_all(db, deliveries)
    retention = timedelta(days=settings.delivery_attempt_retention_days)
    past = Month.of(datetime.now(UTC) - retention - timedelta(days=40))
    async with db.begin() as conn:
        await conn.run_sync(create_partition, ATTEMPTS, past)
        for n in range(3):
            at = past.start + timedelta(days=n)
            await conn.execute(
                insert(delivery_attempts).values(
                    id=click_ids_from(at) + random_base62(RANDOM_ID_CHARS),
                    delivery_id=delivery["id"],
                    started_at=at,
                    request="GET /pb",
                    latency_ms=5,
                    response="",
                    error="",
                    outcome="sent",
                )
            )

    await drop_expired_partitions(db, ATTEMPTS, older_than=datetime.now(UTC) - retention)

    async with db.connect() as conn:
        assert past not in await conn.run_sync(months, ATTEMPTS)
    left = {row["started_at"] for row in await fetch_all(db, delivery_attempts)}
    assert not {at for at in left if at < past.next().start}
