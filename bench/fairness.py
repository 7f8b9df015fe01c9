"""Benchmark of a healthy workspace's delivery beside a destination that hangs.

Run from the repository root (docs/performance.md has the figures):

    .venv/bin/python bench/fairness.py [--hanging 300] [--rounds 5]

In this process, pinned to CPU 0: two local servers, one answering 200 at once and one that
accepts connections and never answers; a fresh SQLite file per round; one ``DeliveryWorker``
with the default settings (32 at a time, 8 per destination, 16 per workspace, a 10 s timeout).

- **floor**: the worker idle, one sale of the healthy workspace written with its delivery and
  the worker woken; the time until the healthy server sees the request.
- **beside a hanging destination**: the same, once the worker is busy with ``--hanging`` due
  deliveries of another workspace to the server that never answers.

Prints the median of the rounds for each, and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bench.harness import seed_campaign
from trilha.accounts import create_user
from trilha.campaigns import create_campaign
from trilha.db.engine import make_engine
from trilha.db.migrate import migrate
from trilha.db.schema import campaigns, clicks, conversions, deliveries
from trilha.deliveries.build import Endpoints
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.kinds import Kind
from trilha.deliveries.verify import verify_destinations
from trilha.deliveries.worker import DeliveryWorker
from trilha.ids import new_id
from trilha.passwords import hash_password
from trilha.settings import Settings
from trilha.workspaces import Workspace, create_workspace


class Servers:
    """The healthy server (notes when each request arrives) and the one that never answers."""

    def __init__(self) -> None:
        self.arrived: asyncio.Event = asyncio.Event()
        self.hanging = 0
        self._held: list[asyncio.StreamWriter] = []

    async def healthy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                self.arrived.set()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def hang(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.hanging += 1
        self._held.append(writer)
        await reader.read()  # until the worker gives up and closes, or release()

    def release(self) -> None:
        for writer in self._held:
            writer.close()
        self._held.clear()
        self.hanging = 0


async def sales(
    conn: AsyncConnection, workspace: Workspace, destination_id: str, count: int, now: datetime
) -> None:
    """``count`` sales on clicks of the workspace's campaign, each with its pending delivery."""
    query = select(campaigns.c.id).where(campaigns.c.workspace_id == workspace.id)
    campaign_id = (await conn.execute(query)).scalar_one()
    click_rows, conversion_rows, delivery_rows = [], [], []
    for i in range(count):
        click_id, conversion_id = new_id(), new_id()
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
                **{"value_minor": 9700, "currency": "BRL", "txid": f"{click_id}-{i}"},
                **{"dedupe_key": f"tx:{click_id}", "created_at": now, "status_changed_at": now},
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
    await conn.execute(insert(clicks), click_rows)
    await conn.execute(insert(conversions), conversion_rows)
    await conn.execute(insert(deliveries), delivery_rows)


async def one_round(
    directory: Path, hanging: int, ports: tuple[int, int], servers: Servers
) -> float:
    """Seconds from the healthy sale's commit to its request at the healthy server."""
    database = f"sqlite+aiosqlite:///{directory / f'round-{time.monotonic_ns()}.db'}"
    await asyncio.to_thread(migrate, database)
    now = datetime.now(UTC)
    engine = make_engine(database)
    healthy_port, hanging_port = ports
    async with engine.begin() as conn:
        stuck = await seed_campaign(conn, slug="stuck", offer_url="https://x.test/", now=now)
        password = await hash_password(secrets.token_urlsafe(24))
        user = await create_user(conn, email="other@example.com", password_hash=password, now=now)
        healthy = await create_workspace(conn, user, name="Healthy", now=now)
        await create_campaign(
            conn, healthy, name="Healthy", slug="healthy", offer_url="https://x.test/", now=now
        )
        url = f"http://127.0.0.1:{hanging_port}/hang"
        slow = await create_destination(conn, stuck, Spec("Slow", Kind.POSTBACK, url), now=now)
        url = f"http://127.0.0.1:{healthy_port}/ok"
        fast = await create_destination(conn, healthy, Spec("Fast", Kind.POSTBACK, url), now=now)
    settings = Settings(database_url=database, delivery_allow_private=True, _env_file=None)
    await verify_destinations(
        engine, endpoints=Endpoints.from_settings(settings), allow_private=True, now=now
    )
    worker = DeliveryWorker(engine, settings)
    worker.start()
    try:
        if hanging:
            async with engine.begin() as conn:
                await sales(conn, stuck, slow.id, hanging, datetime.now(UTC))
            worker.wake()
            while servers.hanging < settings.delivery_per_destination:
                await asyncio.sleep(0.01)
        servers.arrived.clear()
        async with engine.begin() as conn:
            await sales(conn, healthy, fast.id, 1, datetime.now(UTC))
        committed = time.perf_counter()
        worker.wake()
        await asyncio.wait_for(servers.arrived.wait(), timeout=120)
        return time.perf_counter() - committed
    finally:
        servers.release()  # the hanging requests fail at once, and the worker stops
        await worker.stop()
        await engine.dispose()


async def run(hanging: int, rounds: int) -> tuple[list[float], list[float]]:
    servers = Servers()
    healthy = await asyncio.start_server(servers.healthy, "127.0.0.1", 0)
    stuck = await asyncio.start_server(servers.hang, "127.0.0.1", 0)
    ports = (healthy.sockets[0].getsockname()[1], stuck.sockets[0].getsockname()[1])
    floor, beside = [], []
    with tempfile.TemporaryDirectory(prefix="trilha-bench-") as tmp:
        for _ in range(rounds):
            floor.append(await one_round(Path(tmp), 0, ports, servers))
            beside.append(await one_round(Path(tmp), hanging, ports, servers))
    for listening in (healthy, stuck):
        listening.close()
        await listening.wait_closed()
    return floor, beside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--hanging", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.sched_setaffinity(0, {0})
    floor, beside = asyncio.run(run(args.hanging, args.rounds))
    alone, busy = statistics.median(floor), statistics.median(beside)
    print(f"healthy delivery, worker idle: {alone * 1000:7.1f} ms (median of {args.rounds})")
    print(
        f"healthy delivery beside {args.hanging} hanging ones: {busy * 1000:7.1f} ms "
        f"({busy / alone:.1f} times the idle worker's)"
    )


if __name__ == "__main__":
    main()
