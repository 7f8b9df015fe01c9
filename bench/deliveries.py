"""Benchmark of the delivery worker, beside a bare httpx loop sending the same requests.

Run from the repository root (docs/performance.md has the figures and how to read them):

    .venv/bin/python bench/deliveries.py [--deliveries 2000] [--concurrency 32] [--postbacks 300]

A receiver (a bare asyncio HTTP/1.1 server answering 200 with keep-alive, in a process of its
own pinned to CPU 1) takes every request and notes when each arrived. Two parts:

- **throughput**: the floor is an httpx client sending ``--deliveries`` GETs to the receiver,
  ``--concurrency`` at a time; then one ``DeliveryWorker`` (the same concurrency) empties as many
  pending deliveries of one postback destination seeded into a fresh SQLite file: each claimed,
  built from its conversion and click, sent and recorded. Both in this process, pinned to CPU 0.
  Prints deliveries/s and the ratio to the floor (goal ≥ 0.5).
- **delay**: ``trilha serve`` (SQLite, one process with its worker, pinned to CPU 0) gets
  ``--postbacks`` postbacks at full speed (16 at a time), each a sale on a click of its own; the
  delay of each from its postback's answer (its commit) to the receiver seeing its delivery:
  p50 and p99 (goals ≤ 1 s and ≤ 5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

import httpx
from sqlalchemy import Connection, func, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bench.harness import clean_env, free_port, seed, seed_campaign, server
from trilha.db.engine import make_engine
from trilha.db.migrate import migrate
from trilha.db.schema import campaigns, clicks, conversions, deliveries, destinations
from trilha.deliveries.build import Endpoints
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.kinds import Kind
from trilha.deliveries.verify import verify_destinations
from trilha.deliveries.worker import DeliveryWorker
from trilha.ids import new_id
from trilha.settings import Settings
from trilha.workspaces import Workspace

ROOT = Path(__file__).resolve().parent.parent
RECEIVER = """
import asyncio, signal, sys, time
arrivals = []
async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            arrivals.append(f"{time.time():.6f} {head.split(b' ', 2)[1].decode()}")
            writer.write(b"HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\nok")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", int(sys.argv[1]))
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()
    with open(sys.argv[2], "w") as out:
        out.write("\\n".join(arrivals))
asyncio.run(main())
"""


async def floor(url: str, count: int, concurrency: int) -> float:
    """Requests/s of a bare httpx loop, the same GETs the worker sends."""
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=100)) as client:

        async def one(i: int) -> None:
            async with gate:
                response = await client.get(f"{url}/ok?cid=c{i}&p=97.00")
                assert response.status_code == 200

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        return count / (time.perf_counter() - started)


def outbox(url: str, count: int, directory: Path) -> str:
    """A fresh database with ``count`` pending deliveries to the receiver; its URL."""
    database = f"sqlite+aiosqlite:///{directory / 'worker.db'}"
    migrate(database)
    now = datetime.now(UTC)

    async def setup(conn: AsyncConnection) -> None:
        workspace = await seed_campaign(conn, slug="bench", offer_url="https://x.test/", now=now)
        spec = Spec("Bench", Kind.POSTBACK, f"{url}/ok?cid={{sub1}}&p={{payout}}")
        await create_destination(conn, workspace, spec, now=now)
        await conn.run_sync(_pending, workspace, count, now)

    seed(database, setup)
    return database


async def worker_rate(database: str, count: int, concurrency: int) -> float:
    """Deliveries/s of one worker emptying the outbox's ``count`` pending deliveries."""
    now = datetime.now(UTC)
    settings = Settings(  # one destination: let it use every slot, as the floor does
        database_url=database,
        delivery_allow_private=True,
        delivery_concurrency=concurrency,
        delivery_per_destination=concurrency,
        delivery_per_workspace=concurrency,
        _env_file=None,
    )
    engine = make_engine(database)
    await verify_destinations(
        engine, endpoints=Endpoints.from_settings(settings), allow_private=True, now=now
    )
    worker = DeliveryWorker(engine, settings)
    started = time.perf_counter()
    worker.start()
    while await _still_pending(engine):
        await asyncio.sleep(0.02)
    elapsed = time.perf_counter() - started
    await worker.stop()
    await engine.dispose()
    return count / elapsed


async def _still_pending(engine: Any) -> bool:
    async with engine.connect() as conn:
        query = select(func.count()).where(deliveries.c.state == "pending")
        return bool(await conn.scalar(query))


def _pending(conn: Connection, workspace: Workspace, count: int, now: datetime) -> None:
    """``count`` sales on as many clicks, each with its pending delivery (what the outbox
    writes), inserted in bulk."""
    campaign_id = conn.execute(select(campaigns.c.id)).scalar_one()
    destination_id = conn.execute(select(destinations.c.id)).scalar_one()
    click_rows, conversion_rows, delivery_rows = [], [], []
    for i in range(count):
        click_id, conversion_id = f"{i:023d}", new_id()
        click_rows.append(
            {
                **{"id": click_id, "campaign_id": campaign_id, "created_at": now},
                **{"ip": "203.0.113.9", "user_agent_key": 0},  # no agent stored: read as ""
                **{"visitor_key": i, "device_type": "desktop", "os": "Linux"},
                **{"browser": "Firefox", "country": "BR", "referrer": "", "is_bot": False},
                **{"is_unique": True, "params": {}, "sub1": f"c{i}"},
            }
        )
        conversion_rows.append(
            {
                **{"id": conversion_id, "workspace_id": workspace.id, "click_id": click_id},
                **{"campaign_id": campaign_id, "event_type": "SALE", "status": "approved"},
                **{"value_minor": 9700, "currency": "BRL", "txid": f"T{i}"},
                **{"dedupe_key": f"tx:T{i}", "created_at": now, "status_changed_at": now},
            }
        )
        delivery_rows.append(
            {
                **{"id": new_id(), "workspace_id": workspace.id},
                **{"destination_id": destination_id, "conversion_id": conversion_id},
                **{"conversion_status": "approved", "state": "pending", "attempts": 0},
                **{"next_attempt_at": now, "last_error": "", "created_at": now},
            }
        )
    conn.execute(insert(clicks), click_rows)
    conn.execute(insert(conversions), conversion_rows)
    conn.execute(insert(deliveries), delivery_rows)


def delays(receiver_url: str, count: int, directory: Path) -> dict[str, float]:
    """Each sale's txid → the time its postback was answered, under trilha serve."""
    database = f"sqlite+aiosqlite:///{directory / 'serve.db'}"
    migrate(database)
    now = datetime.now(UTC)

    async def setup(conn: AsyncConnection) -> Workspace:
        offer = "https://x.test/?c={click_id}"
        workspace = await seed_campaign(conn, slug="bench", offer_url=offer, now=now)
        spec = Spec("Bench", Kind.POSTBACK, f"{receiver_url}/pb?tx={{txid}}")
        await create_destination(conn, workspace, spec, now=now)
        return workspace

    workspace = seed(database, setup)
    port = free_port()
    env = clean_env(
        TRILHA_DATABASE_URL=database,
        TRILHA_PORT=str(port),
        TRILHA_DELIVERY_ALLOW_PRIVATE="true",
    )
    answered: dict[str, float] = {}
    with server(
        [sys.executable, "-m", "trilha", "serve"],
        port=port,
        cwd=directory,
        env=env,
        log=directory / "serve.log",
    ):
        asyncio.run(_postbacks(f"http://127.0.0.1:{port}", workspace, count, answered))
        time.sleep(6)  # the last deliveries, with room for a slow p99
    return answered


async def _postbacks(
    base: str, workspace: Workspace, count: int, answered: dict[str, float]
) -> None:
    gate = asyncio.Semaphore(16)
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        click_ids = []
        for _ in range(count):
            redirect = await client.get("/r/bench")
            click_ids.append(parse_qs(urlsplit(redirect.headers["location"]).query)["c"][0])
        await asyncio.sleep(2)  # the destination verified by the worker

        async def one(i: int, click_id: str) -> None:
            params = {"token": workspace.postback_token, "click_id": click_id, "txid": f"B{i}"}
            params |= {"event": "sale", "value": "97.00", "currency": "BRL"}
            async with gate:
                response = await client.get("/postback", params=params)
                assert response.status_code == 200, response.text
                answered[f"B{i}"] = time.time()

        started = time.perf_counter()
        await asyncio.gather(*(one(i, c) for i, c in enumerate(click_ids)))
        answered["_rate"] = count / (time.perf_counter() - started)


def arrivals_of(path: Path) -> dict[str, float]:
    seen: dict[str, float] = {}
    for line in path.read_text().splitlines():
        at, target = line.split(" ", 1)
        if target.startswith("/pb?tx="):
            seen.setdefault(target.removeprefix("/pb?tx="), float(at))
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--deliveries", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--postbacks", type=int, default=300)
    args = parser.parse_args()
    os.sched_setaffinity(0, {0})
    with tempfile.TemporaryDirectory(prefix="trilha-bench-") as tmp:
        directory = Path(tmp)
        script = directory / "receiver.py"
        script.write_text(RECEIVER)
        arrivals = directory / "arrivals.txt"
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        command = ["taskset", "-c", "1", sys.executable, str(script), str(port), str(arrivals)]
        with server(command, port=port, cwd=ROOT, env=clean_env(), log=directory / "r.log"):
            bare = asyncio.run(floor(url, args.deliveries, args.concurrency))
            database = outbox(url, args.deliveries, directory)
            sent = asyncio.run(worker_rate(database, args.deliveries, args.concurrency))
            answered = delays(url, args.postbacks, directory)
        seen = arrivals_of(arrivals)
    rate = answered.pop("_rate")
    waits = sorted(seen.get(tx, float("inf")) - at for tx, at in answered.items())
    p50 = statistics.median(waits)
    p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
    print(f"bare httpx loop:  {bare:8.0f} requests/s (concurrency {args.concurrency})")
    print(
        f"delivery worker:  {sent:8.0f} deliveries/s  ({sent / bare:.2f} of the loop; goal ≥ 0.5)"
    )
    print(
        f"commit → first attempt, {len(waits)} sales at {rate:.0f} postbacks/s: "
        f"p50 {p50 * 1000:.0f} ms, "
        f"p99 {p99 * 1000:.0f} ms (goals ≤ 1000 / 5000 ms); never arrived: "
        f"{sum(w == float('inf') for w in waits)}"
    )


if __name__ == "__main__":
    main()
