"""Benchmark of clicks during a cost CSV import: click latency with and without a 5000-line
import running.

Run from the repository root (docs/performance.md has the figures and how to read them):

    .venv/bin/python bench/cost_import.py [--rounds 5] [--lines 5000] [--clickers 4]

Each round starts ``trilha serve`` (SQLite, one process, pinned to CPU 0) on a fresh database
with one workspace, campaign and API key. ``--clickers`` loops (this process, pinned to CPU 1)
then click one after the other for ``QUIET`` seconds: the clicks alone. Then they click again
while the campaign's cost CSV of ``--lines`` days is imported through the API, from the import's
start until its answer. Printed per mode, the median over rounds of each round's p50, p99 and
slowest click, and the import's own time.
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
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

import httpx
from sqlalchemy.ext.asyncio import AsyncConnection

from bench.harness import clean_env, free_port, seed, server
from trilha.accounts import create_api_key, create_user
from trilha.campaigns import create_campaign
from trilha.db.migrate import migrate
from trilha.passwords import hash_password
from trilha.workspaces import create_workspace

QUIET = 3.0  # seconds of clicks alone


async def setup(conn: AsyncConnection) -> tuple[str, str, str]:
    """The workspace's id, the campaign's id and an API key's secret."""
    now = datetime.now(UTC)
    password_hash = await hash_password(secrets.token_urlsafe(24))
    user = await create_user(conn, email="bench@example.com", password_hash=password_hash, now=now)
    workspace = await create_workspace(conn, user, name="Bench", now=now)
    campaign = await create_campaign(
        conn, workspace, name="Bench", slug="bench", offer_url="https://x.test/", now=now
    )
    _, secret = await create_api_key(conn, user, name="bench", now=now)
    return workspace.id, campaign.id, secret


def cost_csv(lines: int) -> bytes:
    first = date(2010, 1, 1)
    days = (first + timedelta(days=n) for n in range(lines))
    return ("day;cost;impressions\n" + "".join(f"{d};12,50;25.000\n" for d in days)).encode()


async def clicking(client: httpx.AsyncClient, until: asyncio.Event, waits: list[float]) -> None:
    while not until.is_set():
        started = time.perf_counter()
        response = await client.get("/r/bench")
        assert response.status_code == 302, response.text
        waits.append(time.perf_counter() - started)


async def clicks_alone(client: httpx.AsyncClient, clickers: int) -> list[float]:
    waits: list[float] = []
    until = asyncio.Event()
    loops = [asyncio.create_task(clicking(client, until, waits)) for _ in range(clickers)]
    await asyncio.sleep(QUIET)
    until.set()
    await asyncio.gather(*loops)
    return waits


async def clicks_importing(
    client: httpx.AsyncClient, clickers: int, url: str, key: str, data: bytes
) -> tuple[list[float], float]:
    waits: list[float] = []
    until = asyncio.Event()
    loops = [asyncio.create_task(clicking(client, until, waits)) for _ in range(clickers)]
    await asyncio.sleep(0.2)
    waits.clear()  # from the import's start only
    started = time.perf_counter()
    response = await client.post(
        url, files={"file": ("costs.csv", data)}, headers={"Authorization": f"Bearer {key}"}
    )
    took = time.perf_counter() - started
    assert response.status_code == 200, response.text
    until.set()
    await asyncio.gather(*loops)
    return waits, took


def summary(waits: list[float]) -> tuple[float, float, float]:
    """p50, p99 and the slowest, in ms."""
    ordered = sorted(waits)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1000, p99 * 1000, ordered[-1] * 1000


async def one_round(base: str, ids: tuple[str, str, str], args: argparse.Namespace) -> list[float]:
    workspace_id, campaign_id, key = ids
    url = f"/api/v1/workspaces/{workspace_id}/campaigns/{campaign_id}/costs/days/import"
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        alone = await clicks_alone(client, args.clickers)
        during, took = await clicks_importing(client, args.clickers, url, key, cost_csv(args.lines))
    return [*summary(alone), *summary(during), took * 1000, len(during)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--clickers", type=int, default=4)
    args = parser.parse_args()
    os.sched_setaffinity(0, {1})
    rounds = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="trilha-bench-") as tmp:
            directory = Path(tmp)
            database = f"sqlite+aiosqlite:///{directory / 'serve.db'}"
            migrate(database)
            ids = seed(database, setup)
            port = free_port()
            env = clean_env(TRILHA_DATABASE_URL=database, TRILHA_PORT=str(port))
            command = [sys.executable, "-m", "trilha", "serve"]
            with server(command, port=port, cwd=directory, env=env, log=directory / "serve.log"):
                rounds.append(asyncio.run(one_round(f"http://127.0.0.1:{port}", ids, args)))
    m = [statistics.median(values) for values in zip(*rounds, strict=True)]
    print(f"{args.rounds} rounds, {args.clickers} clickers, medians of each round's figures")
    print(
        f"clicks alone:            p50 {m[0]:6.1f} ms  p99 {m[1]:7.1f} ms  slowest {m[2]:7.1f} ms"
    )
    print(
        f"clicks during an import: p50 {m[3]:6.1f} ms  p99 {m[4]:7.1f} ms  slowest {m[5]:7.1f} ms"
    )
    print(f"import of {args.lines} lines: {m[6]:.0f} ms, {m[7]:.0f} clicks answered meanwhile")


if __name__ == "__main__":
    main()
