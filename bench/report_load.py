"""Clicks per second on `trilha serve` (SQLite) while heavy reports run, beside clicks alone.

Run from the repository root (docs/performance.md has the results and how to read them):

    .venv/bin/python bench/report_load.py [--clicks 200000] [--days 7] [--rounds 3]
                                          [--seconds 10] [--reports 4]

One fresh SQLite database is filled by bench/prefill.py (``--clicks`` clicks over the last
``--days`` days, on many distinct sub1 values), its hourly rollups rebuilt, and served by one
`trilha serve` process pinned to core 0 with its default settings. Each round measures, with wrk
on core 1 (64 connections) sending `GET /r/{slug}`:

- ``alone``: clicks per second with nothing else running;
- ``with reports``: the same while ``--reports`` clients (threads of this process) each ask for
  the heaviest report there is, in a loop, as fast as they are answered: the last 7 days grouped
  by sub1, every distinct value a row, through the API with a viewer's key.

Printed: the medians of the rounds (clicks/s, p99), the ratio loaded/alone (goal: at least 0.8),
and how the reports were answered (200, 429 past the workspace's turns, 503 past the time limit).
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from bench.harness import (
    BIN,
    HOST,
    WRK_REPORT,
    WrkResult,
    clean_env,
    free_port,
    http_get,
    query,
    run_wrk,
    seed,
    server,
    tree_cpu,
)
from bench.prefill import prefill
from trilha.accounts import create_api_key, create_user
from trilha.campaigns import create_campaign
from trilha.db.migrate import migrate
from trilha.passwords import hash_password
from trilha.reports.rollups import rebuild_rollups
from trilha.workspaces import Role, add_member, create_workspace

GOAL = 0.8
SLUG = "load"
CONNECTIONS = 64
WARMUP_SECONDS = 3.0
REPORTS_RUNNING = 1.0  # seconds the report clients get to be running before wrk starts
IDLE_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Seeded:
    workspace_id: str
    viewer_key: str


@dataclass(frozen=True, slots=True)
class Phase:
    clicks_per_second: float
    p99_ms: float
    reports: Counter[int]


async def seed_workspace(conn: AsyncConnection) -> Seeded:
    """The workspace prefill fills (the oldest), a campaign to click, and a viewer's API key."""
    now = datetime.now(UTC)
    password_hash = await hash_password(secrets.token_urlsafe(24))
    owner = await create_user(conn, email="owner@example.com", password_hash=password_hash, now=now)
    workspace = await create_workspace(conn, owner, name="Load", now=now)
    await create_campaign(
        conn,
        workspace,
        name="Load",
        slug=SLUG,
        offer_url="https://offer.test/?c={click_id}",
        now=now,
    )
    viewer = await create_user(
        conn, email="viewer@example.com", password_hash=password_hash, now=now
    )
    await add_member(conn, workspace, viewer, role=Role.VIEWER, now=now)
    _, secret = await create_api_key(conn, viewer, name="reports", now=now)
    return Seeded(workspace.id, secret)


def report_loop(
    port: int, path: str, headers: dict[str, str], stop: threading.Event
) -> Counter[int]:
    answers: Counter[int] = Counter()
    while not stop.is_set():
        try:
            status, _, _ = http_get(port, path, headers)
        except OSError:
            status = 0  # no answer within http_get's timeout
        answers[status] += 1
    return answers


def clicks_for(port: int, seconds: float, script: Path) -> WrkResult:
    return run_wrk(
        port, seconds=seconds, connections=CONNECTIONS, script=script, path=f"/r/{SLUG}", headers={}
    )


def phase(result: WrkResult, reports: Counter[int]) -> Phase:
    s = result.summary
    return Phase(s["requests"] / (s["duration_us"] / 1e6), s["p99_us"] / 1000, reports)


def loaded(port: int, seconds: float, script: Path, seeded: Seeded, reports: int) -> Phase:
    path = f"/api/v1/workspaces/{seeded.workspace_id}/reports?preset=last_7_days&group_by=sub1"
    headers = {"authorization": f"Bearer {seeded.viewer_key}"}
    stop = threading.Event()
    answers: list[Counter[int]] = []

    def loop() -> None:
        answers.append(report_loop(port, path, headers, stop))

    threads = [threading.Thread(target=loop) for _ in range(reports)]
    for thread in threads:
        thread.start()
    time.sleep(REPORTS_RUNNING)
    try:
        result = clicks_for(port, seconds, script)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return phase(result, sum(answers, Counter()))


def wait_until_idle(pid: int) -> None:
    """Until the server has no report left to finish (one whose client gave up runs on): a
    second in which it used under a tenth of a core."""
    deadline = time.monotonic() + IDLE_TIMEOUT
    while time.monotonic() < deadline:
        before = tree_cpu(pid)
        time.sleep(1.0)
        if tree_cpu(pid) - before < 0.1:
            return


def fill(url: str, args: argparse.Namespace) -> Seeded:
    migrate(url)
    seeded = seed(url, seed_workspace)
    print(f"prefilling {args.clicks:,} clicks ...", flush=True)
    stats = prefill(
        url, clicks_count=args.clicks, days=args.days, conversions_count=args.clicks // 50
    )

    def rollups(conn: Connection) -> None:
        rebuild_rollups(conn)
        conn.commit()

    query(url, rollups)
    print(f"  done in {stats.seconds:,.0f} s", flush=True)
    return seeded


def run(args: argparse.Namespace) -> tuple[list[Phase], list[Phase]]:
    with tempfile.TemporaryDirectory(prefix="report-load-") as directory:
        here = Path(directory)
        url = f"sqlite+aiosqlite:///{here / 'trilha.db'}"
        seeded = fill(url, args)
        script = here / "wrk.lua"
        script.write_text(WRK_REPORT)
        port = free_port()
        env = clean_env(TRILHA_DATABASE_URL=url, TRILHA_HOST=HOST, TRILHA_PORT=str(port))
        alone: list[Phase] = []
        with_reports: list[Phase] = []
        command = [str(BIN / "trilha"), "serve"]
        with server(command, port=port, cwd=here, env=env, log=here / "server.log") as proc:
            clicks_for(port, WARMUP_SECONDS, script)
            for round_no in range(1, args.rounds + 1):
                alone.append(phase(clicks_for(port, args.seconds, script), Counter()))
                with_reports.append(loaded(port, args.seconds, script, seeded, args.reports))
                wait_until_idle(proc.pid)
                print(
                    f"  round {round_no}: {show(alone[-1])} | {show(with_reports[-1])}", flush=True
                )
    return alone, with_reports


def show(p: Phase) -> str:
    answered = ", ".join(f"{status}: {n}" for status, n in sorted(p.reports.items()))
    return f"{p.clicks_per_second:,.0f} clicks/s, p99 {p.p99_ms:,.1f} ms" + (
        f" (reports {answered})" if answered else ""
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clicks", type=int, default=200_000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--reports", type=int, default=4, help="report clients at once")
    args = parser.parse_args()
    alone, with_reports = run(args)
    rate_alone = statistics.median(p.clicks_per_second for p in alone)
    rate_loaded = statistics.median(p.clicks_per_second for p in with_reports)
    answers = sum((p.reports for p in with_reports), Counter())
    p99_alone = statistics.median(p.p99_ms for p in alone)
    p99_loaded = statistics.median(p.p99_ms for p in with_reports)
    print(f"alone          {rate_alone:9,.0f} clicks/s  p99 {p99_alone:8,.1f} ms")
    print(f"with {args.reports} reports {rate_loaded:9,.0f} clicks/s  p99 {p99_loaded:8,.1f} ms")
    ratio = rate_loaded / rate_alone
    print(f"ratio {ratio:.2f} (goal ≥ {GOAL}): {'met' if ratio >= GOAL else 'NOT met'}")
    print("reports answered: " + ", ".join(f"{s}: {n}" for s, n in sorted(answers.items())))
    with contextlib.suppress(BrokenPipeError):
        sys.stdout.flush()


if __name__ == "__main__":
    main()
