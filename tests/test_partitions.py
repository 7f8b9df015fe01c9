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
from sqlalchemy import create_engine, delete, insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import _admin
from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.factories import fetch_all, fetch_clicks, make_campaign, make_workspace
from tests.test_agent_retention import agents_read_back, click_as, stored_agents
from tests.test_retention import RETENTION, clicks_aged, rollup_clicks
from tests.web.callers import make_owner
from tests.web.sales import click, postback
from trilha.app import TrilhaApp
from trilha.click_retention import purge_old_clicks
from trilha.db.migrate import alembic_config, migrate
from trilha.db.partitions import (
    ATTEMPTS,
    CLICKS,
    PARTITIONED,
    POSTBACK_LOG,
    Month,
    Partitioned,
    create_partition,
    drop_expired_partitions,
    ensure_partitions,
    months,
    validate_references,
)
from trilha.db.schema import (
    conversion_status_history,
    conversions,
    deliveries,
    delivery_attempts,
    postback_log,
)
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.deliveries.worker import DeliveryWorker
from trilha.ids import RANDOM_ID_CHARS, click_ids_from, new_id, random_base62
from trilha.maintenance import purge_expired_clicks, purge_old_rows
from trilha.settings import Settings
from trilha.workspaces import Workspace

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


async def month_names(db: AsyncEngine, table: Partitioned = CLICKS) -> set[str]:
    async with db.connect() as conn:
        return {table.partition(month) for month in await conn.run_sync(months, table)}


async def partition_of(db: AsyncEngine, row_id: str, table: Partitioned = CLICKS) -> str:
    found: str = await one(
        db,
        f"SELECT tableoid::regclass::text FROM {table.table} WHERE id = :id",  # noqa: S608
        id=row_id,
    )
    return found


async def reference_checked(db: AsyncEngine, table: Partitioned = CLICKS) -> bool:
    """Whether the reference to ``table`` (conversions' to clicks, the history's to the
    postback log) is there, whole, checked and as declared."""
    assert table.reference is not None
    checked: bool = await one(
        db,
        "SELECT convalidated FROM pg_constraint WHERE conname = :name AND conparentid = 0"
        " AND confdeltype = 'n' AND confrelid = to_regclass(:table)"
        " AND condeferrable = :deferrable AND condeferred = :deferrable",
        name=table.reference.name,
        table=table.table,
        deferrable=table.reference.deferrable,
    )
    return checked


async def without_worker(app: TrilhaApp) -> None:
    """The app's delivery worker creates the coming months on its own schedule (at start, then
    each upkeep): stopped, so that a month a test drops stays dropped until the test makes it."""
    if app.runtime.deliveries is not None:
        await app.runtime.deliveries.stop()


async def drop_months(db: AsyncEngine, *drop: Month, table: Partitioned = CLICKS) -> None:
    async with db.begin() as conn:
        for month in drop:
            name = table.partition(month)
            await conn.execute(text(f"ALTER TABLE {table.table} DETACH PARTITION {name}"))
            await conn.execute(text(f"DROP TABLE {name}"))


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
    assert {row["id"] for row in await fetch_clicks(db)} == {*old, *new}
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
    for table in PARTITIONED:
        await drop_months(db, *ahead, table=table)
        assert await month_names(db, table) == {table.partition(this)}
    worker = DeliveryWorker(db, settings)
    worker.start()

    async def created() -> bool:
        return all(
            [
                await month_names(db, table) == {table.partition(m) for m in (this, *ahead)}
                for table in PARTITIONED
            ]
        )

    try:
        await eventually(created)
    finally:
        await worker.stop()


async def test_a_click_no_month_covers_lands_in_the_default_partition_then_moves_in(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    this = Month.of(datetime.now(UTC))
    await without_worker(app)
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
    assert {row["id"] for row in await fetch_clicks(db)} == {old[0], *new}
    assert await partition_of(db, old[0]) == CLICKS.default
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] == old[0]
    assert await reference_checked(db)
    assert await rollup_clicks(db) == before == (6, 6)


async def test_retention_takes_the_agents_of_a_month_dropped_whole_but_its_converted_clicks(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    past = Month.of(datetime.now(UTC) - timedelta(days=75))
    async with db.begin() as conn:
        await conn.run_sync(create_partition, CLICKS, past)
    age = timedelta(days=75)
    await click_as(client, db, campaign, "Dropped/1.0", age=age)
    sold = await click_as(client, db, campaign, "Sold/1.0", age=age)
    answer = await postback(client, workspace, click_id=sold, txid="T1", payout="97,00")
    assert answer["status"] == "created", answer

    await purge_expired_clicks(db, days=RETENTION.days)

    assert CLICKS.partition(past) not in await month_names(db)
    assert await stored_agents(db) == {"Sold/1.0"}
    assert await agents_read_back(db) == {sold: "Sold/1.0"}


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


def log_entry(workspace: Workspace, at: datetime, txid: str) -> dict[str, Any]:
    """A postback log entry received at ``at``, its id of that millisecond."""
    return {
        "id": click_ids_from(at) + random_base62(RANDOM_ID_CHARS),
        "workspace_id": workspace.id,
        "received_at": at,
        "method": "GET",
        "path": "/pb",
        "query": f"txid={txid}",
        "headers": [],
        "body": "",
        "body_truncated": False,
        "source_ip": "127.0.0.1",
        "auth_failed": False,
        "outcome": "orphan",
        "reason": "",
        "txid": txid,
        "details": {},
        "processing_us": 1,
    }


async def log_entries_at(
    db: AsyncEngine, workspace: Workspace, at: datetime, *txids: str
) -> list[str]:
    rows = [log_entry(workspace, at, txid) for txid in txids]
    async with db.begin() as conn:
        await conn.execute(insert(postback_log), rows)
    return [row["id"] for row in rows]


async def history_to(db: AsyncEngine, conversion_id: str, postback_id: str) -> str:
    """A status change of the conversion that ``postback_id``'s entry made; its id."""
    history_id = new_id()
    async with db.begin() as conn:
        await conn.execute(
            insert(conversion_status_history).values(
                id=history_id,
                conversion_id=conversion_id,
                from_status="approved",
                to_status="refunded",
                postback_id=postback_id,
                actor="postback",
                created_at=datetime.now(UTC),
            )
        )
    return history_id


async def references(db: AsyncEngine) -> dict[str, str | None]:
    return {row["id"]: row["postback_id"] for row in await fetch_all(db, conversion_status_history)}


async def sale(client: httpx.AsyncClient, db: AsyncEngine, workspace: Workspace) -> str:
    """A click, then a postback that converts it; the conversion's id."""
    _, click_id = await click(client, db, workspace)
    sold = await postback(client, workspace, click_id=click_id, txid="T1", payout="97,00")
    assert sold["status"] == "created", sold
    [conversion] = await fetch_all(db, conversions)
    conversion_id: str = conversion["id"]
    return conversion_id


async def test_the_migration_partitions_a_populated_postback_log_and_back(
    client: httpx.AsyncClient, db: AsyncEngine, database_url: str
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    conversion_id = await sale(client, db, workspace)
    then = Month.of(datetime.now(UTC) - timedelta(days=70))
    old = await log_entries_at(db, workspace, then.start + timedelta(days=3), "O1", "O2")
    await history_to(db, conversion_id, old[0])
    entries, pointing = (
        {row["id"] for row in await fetch_all(db, postback_log)},
        await references(db),
    )
    collation = (
        "SELECT collation_name FROM information_schema.columns"
        " WHERE table_name = :table AND column_name = :column"
    )

    await asyncio.to_thread(downgrade, database_url, "0023")

    assert await one(db, "SELECT relkind FROM pg_class WHERE relname = 'postback_log'") == "r"
    assert await one(db, collation, table="postback_log", column="id") is None
    assert {row["id"] for row in await fetch_all(db, postback_log)} == entries
    assert await references(db) == pointing
    assert await reference_checked(db, POSTBACK_LOG)

    await asyncio.to_thread(migrate, database_url)

    assert await one(db, "SELECT relkind FROM pg_class WHERE relname = 'postback_log'") == "p"
    assert await one(db, collation, table="postback_log", column="id") == "C"
    assert await one(db, collation, table="conversion_status_history", column="postback_id") == "C"
    assert {row["id"] for row in await fetch_all(db, postback_log)} == entries
    assert await references(db) == pointing
    assert await reference_checked(db, POSTBACK_LOG)
    now, wanted, month = Month.of(datetime.now(UTC)), set(), then
    while month != now.next().next().next():
        wanted.add(POSTBACK_LOG.partition(month))
        month = month.next()
    assert await month_names(db, POSTBACK_LOG) == wanted
    assert {await partition_of(db, entry, POSTBACK_LOG) for entry in old} == {
        POSTBACK_LOG.partition(then)
    }


async def test_a_log_entry_no_month_covers_lands_in_the_default_partition_then_moves_in(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    this = Month.of(datetime.now(UTC))
    await without_worker(app)
    await drop_months(db, this, table=POSTBACK_LOG)

    await sale(client, db, workspace)

    [entry] = await fetch_all(db, postback_log)
    assert await partition_of(db, entry["id"], POSTBACK_LOG) == POSTBACK_LOG.default
    async with db.begin() as conn:
        created = await conn.run_sync(ensure_partitions, now=datetime.now(UTC))
    assert created == [POSTBACK_LOG.partition(this)]
    assert await partition_of(db, entry["id"], POSTBACK_LOG) == POSTBACK_LOG.partition(this)
    assert list((await references(db)).values()) == [entry["id"]]
    async with db.begin() as conn:
        await conn.run_sync(validate_references)
    assert await reference_checked(db, POSTBACK_LOG)


async def test_retention_drops_a_past_month_of_log_entries_whole_and_empties_its_references(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    conversion_id = await sale(client, db, workspace)
    [sold] = await fetch_all(db, postback_log)
    now, retention = datetime.now(UTC), timedelta(days=settings.postback_log_retention_days)
    past = Month.of(now - retention - timedelta(days=40))
    async with db.begin() as conn:
        await conn.run_sync(create_partition, POSTBACK_LOG, past)
    gone = await log_entries_at(db, workspace, past.start + timedelta(days=2), "P1", "P2")
    pointed = await history_to(db, conversion_id, gone[0])
    # In months no partition holds (the default's): row by row, as on SQLite.
    await log_entries_at(db, workspace, now - retention - timedelta(days=1), "E1")
    await log_entries_at(db, workspace, now - retention + timedelta(days=1), "K1")

    await purge_old_rows(db, settings)

    assert POSTBACK_LOG.partition(past) not in await month_names(db, POSTBACK_LOG)
    left = {row["txid"]: row for row in await fetch_all(db, postback_log)}
    assert set(left) == {"T1", "K1"}
    assert left["K1"]["payload_purged_at"] is not None  # past the payloads' 30 days
    assert left["T1"]["payload_purged_at"] is None
    pointing = await references(db)
    assert pointing.pop(pointed) is None  # the history row stays, its entry gone
    assert list(pointing.values()) == [sold["id"]]
    assert await reference_checked(db, POSTBACK_LOG)


async def test_the_history_still_references_the_partitioned_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db, timezone="UTC")
    conversion_id = await sale(client, db, workspace)  # the entry written after its history row
    [entry] = await fetch_all(db, postback_log)

    with pytest.raises(IntegrityError, match="fk_conversion_status_history_postback_id"):
        await history_to(db, conversion_id, new_id())  # no such entry: refused at commit
    async with db.begin() as conn:
        await conn.execute(delete(postback_log).where(postback_log.c.id == entry["id"]))

    assert list((await references(db)).values()) == [None]
