"""Several workers: none sends a delivery another holds; a worker that dies lets go of its
deliveries when the lease runs out; `trilha worker` stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, make_workspace
from trilha.db.engine import make_engine
from trilha.db.schema import deliveries, delivery_attempts
from trilha.deliveries.claims import Fairness, claim_due
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import AttemptOutcome, Kind
from trilha.deliveries.lifecycle import record_attempt
from trilha.deliveries.send import Sent
from trilha.deliveries.worker import DeliveryWorker
from trilha.settings import Settings
from trilha.workspaces import Workspace

FAIR = Fairness(per_destination=4, per_workspace=8)


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """No worker in the app: the tests run their own."""
    return settings.model_copy(update={"delivery_worker": False})


async def queue(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    settings: Settings,
    url: str,
    *,
    destinations: int = 1,
    conversions: int = 1,
) -> Workspace:
    workspace = await make_workspace(db)
    for n in range(destinations):
        spec = Spec(f"Tracker {n}", Kind.POSTBACK, url.replace("DEST", str(n)))
        await make_destination(db, workspace, spec, settings=settings)
    for n in range(conversions):
        click = await click_on(client, db, workspace)
        await report(client, workspace, click["id"], txid=f"T{n}")
    return workspace


async def test_concurrent_workers_never_send_a_delivery_twice(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    url = receiver.url("/ok?d=DEST&c={conversion_id}")
    await queue(client, db, settings, url, destinations=40, conversions=4)
    engines = [make_engine(settings.database_url) for _ in range(3)]
    workers = [
        DeliveryWorker(engine, settings.model_copy(update={"delivery_concurrency": 8}))
        for engine in engines
    ]
    for worker in workers:
        worker.start()

    async def all_sent() -> bool:
        rows = await fetch_all(db, deliveries)
        return all(row["state"] == "sent" for row in rows)

    try:
        await eventually(all_sent, timeout=30)
    finally:
        for worker in workers:
            await worker.stop()
        for engine in engines:
            await engine.dispose()

    sent = Counter((r.query["d"][0], r.query["c"][0]) for r in receiver.at("/ok"))
    assert len(sent) == 160
    assert set(sent.values()) == {1}
    assert len(await fetch_all(db, delivery_attempts)) == 160


async def test_a_lease_keeps_other_workers_off_until_it_runs_out(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    await queue(client, db, settings, receiver.url("/ok"))
    lease = timedelta(seconds=30)
    t0 = datetime.now(UTC)

    async with db.begin() as conn:
        [first] = await claim_due(conn, now=t0, limit=10, lease=lease, fairness=FAIR)
    async with db.begin() as conn:
        assert (
            await claim_due(
                conn, now=t0 + timedelta(seconds=29), limit=10, lease=lease, fairness=FAIR
            )
            == []
        )
    async with db.begin() as conn:
        [again] = await claim_due(
            conn, now=t0 + timedelta(seconds=31), limit=10, lease=lease, fairness=FAIR
        )
    assert again.delivery_id == first.delivery_id

    # The first worker comes back late: its attempt is logged but changes nothing it no
    # longer holds.
    late = Sent(AttemptOutcome.SUCCESS, "GET /ok", status_code=200)
    async with db.begin() as conn:
        assert not await record_attempt(conn, first, late, now=t0, spread=0)
    [delivery] = await fetch_all(db, deliveries)
    assert (delivery["state"], delivery["attempts"]) == ("pending", 0)
    assert delivery["lease_until"] == again.lease_until


def start_worker(settings: Settings) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "TRILHA_DATABASE_URL": settings.database_url,
        "TRILHA_DELIVERY_ALLOW_PRIVATE": "true",
        "TRILHA_DELIVERY_POLL_INTERVAL": "0.1",
        "TRILHA_DELIVERY_LEASE_SECONDS": "30",
        "TRILHA_DELIVERY_TIMEOUT": "20",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "trilha", "worker"],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


async def test_a_killed_worker_leaves_its_delivery_to_the_next_after_the_lease(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    await queue(client, db, settings, receiver.url("/hang"))
    process = start_worker(settings)
    try:
        await eventually(lambda: _true(bool(receiver.at("/hang"))), timeout=20)
    finally:
        process.kill()
        await asyncio.to_thread(process.communicate, timeout=10)

    [delivery] = await fetch_all(db, deliveries)
    assert (delivery["state"], delivery["attempts"]) == ("pending", 0)
    assert delivery["lease_until"] is not None
    later = delivery["lease_until"] + timedelta(seconds=1)
    async with db.begin() as conn:
        [job] = await claim_due(
            conn, now=later, limit=10, lease=timedelta(seconds=30), fairness=FAIR
        )
    assert job.delivery_id == delivery["id"]


async def test_trilha_worker_sends_and_stops_on_sigterm(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    await queue(client, db, settings, receiver.url("/ok"))
    process = start_worker(settings)

    async def sent() -> bool:
        rows = await fetch_all(db, deliveries)
        return bool(rows[0]["state"] == "sent")

    try:
        await eventually(sent, timeout=20)
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = await asyncio.to_thread(process.communicate, timeout=20)

    assert process.returncode == 0, output
    assert "delivery worker stopped" in output
    assert len(receiver.at("/ok")) == 1


async def _true(value: bool) -> bool:
    return value
