"""Benchmark of the redirect GET /r/{slug} against a 302 that stores nothing.

Run from the repository root (docs/performance.md has the figures and how to read them):

    .venv/bin/python bench/redirect.py [--duration 10] [--connections 64] [--rounds 3]

Every target runs in turn on the loopback interface, its server pinned to CPU 0 and wrk (one
thread) to CPU 1: a 2 s warm-up, then a measured run. The targets:

- ``nginx``: nginx answering ``return 302`` (one worker), the ceiling of the machine;
- ``starlette``: a bare Starlette app answering the same 302, on granian (one ASGI worker);
- ``asgi``: a bare ASGI function answering the same 302, on granian, the floor of Python;
- ``asgi-batched``: the bare function behind a group "commit" that stores nothing (diagnostic);
- ``trilha-sqlite-full`` / ``trilha-sqlite-normal``: ``trilha serve`` (granian, ASGI, 1 worker)
  on a fresh, migrated SQLite file with ``synchronous=FULL`` (the default) or ``NORMAL``;
- ``trilha-postgres``: ``trilha serve`` on a fresh PostgreSQL database, dropped afterwards.

For each target it prints requests/s, p50/p99 latency, the server's CPU time per request (its
process tree's utime+stime from /proc), for PostgreSQL the CPU of the server processes serving
trilha's connections, wrk's own CPU (near 100 % means wrk was the limit) and what every other
process on the machine used meanwhile (a run disturbed by them is measured again). After each
trilha run it checks that the clicks stored cover every 2xx/3xx wrk counted. The figures (medians
over the rounds) also go to bench/results/redirect-<time>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import http.client
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import psycopg
from sqlalchemy import create_engine, func, select
from sqlalchemy.engine import make_url

from trilha.accounts import create_user
from trilha.campaigns import create_campaign
from trilha.db.engine import make_engine, sync_url
from trilha.db.migrate import migrate
from trilha.db.schema import clicks
from trilha.workspaces import create_workspace

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
SERVER_CPU = "0"
WRK_CPU = "1"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1/test"

SLUG = "bench"
PATH = f"/r/{SLUG}?utm_source=facebook&sub1=abc&ad_id=120210000000001&fbclid=IwAR0bench"
OFFER_URL = "https://offer.example.com/checkout?cid={click_id}&src={utm_source}&s1={sub1}"
USER_AGENT = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
)
NGINX_LOCATION = (
    "https://offer.example.com/checkout?cid=0Pq3s9AbCdEfGhIjKlMnOpQ&src=facebook&s1=abc"
)

READY_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
SETTLE = 0.5  # seconds for in-flight commits to finish before clicks are counted

# wrk prints its own report, then this line: the numbers the script reads.
WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect_errors":%d,' ..
    '"read_errors":%d,"write_errors":%d,"status_errors":%d,"timeout_errors":%d,' ..
    '"p50_us":%.0f,"p90_us":%.0f,"p99_us":%.0f,"p999_us":%.0f,"mean_us":%.1f,"max_us":%.0f}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.mean, latency.max))
end
"""

NGINX_CONF = """
worker_processes 1;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 10000000;
  client_body_temp_path {prefix}/body;
  proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/fastcgi;
  uwsgi_temp_path {prefix}/uwsgi;
  scgi_temp_path {prefix}/scgi;
  server {{
    listen {host}:{port};
    location /r/ {{
      add_header cache-control no-store;
      add_header referrer-policy no-referrer-when-downgrade;
      return 302 "{location}";
    }}
  }}
}}
"""


@dataclass(frozen=True)
class Target:
    name: str
    kind: str  # nginx | granian | trilha
    app: str = ""  # granian's APP for the baselines
    database: str = ""  # sqlite | postgres, for trilha
    synchronous: str = "FULL"


TARGETS = {
    t.name: t
    for t in (
        Target("nginx", "nginx"),
        Target("starlette", "granian", app="bench.baselines:starlette_app"),
        Target("asgi", "granian", app="bench.baselines:asgi_app"),
        Target("asgi-batched", "granian", app="bench.baselines:batched_app"),
        Target("trilha-sqlite-full", "trilha", database="sqlite", synchronous="FULL"),
        Target("trilha-sqlite-normal", "trilha", database="sqlite", synchronous="NORMAL"),
        Target("trilha-postgres", "trilha", database="postgres"),
    )
}

# (trilha target, baseline, the least trilha/baseline the issue asks for)
GOALS = (
    ("trilha-sqlite-full", "nginx", 0.15),
    ("trilha-sqlite-full", "starlette", 0.8),
    ("trilha-sqlite-normal", "nginx", 0.15),
    ("trilha-sqlite-normal", "starlette", 0.8),
    ("trilha-postgres", "nginx", 0.1),
    ("trilha-postgres", "starlette", None),
)


@dataclass
class Measurement:
    target: str
    round: int
    requests: int
    ok_responses: int  # wrk's requests less its "Non-2xx or 3xx" count
    errors: dict[str, int]
    seconds: float
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float
    server_cpu_us: float  # server process tree, per request
    wrk_cpu_pct: float  # of its one core: near 100 means wrk, not the server, was the limit
    other_cpu_pct: float  # everything else the machine ran meanwhile, in % of one core: noise
    db_cpu_us: float | None = None  # PostgreSQL's processes serving trilha's pool, per request
    clicks_stored: int | None = None  # during the measured run
    durable: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# --- processes -----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any TRILHA_* or GRANIAN_* setting of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRILHA_", "GRANIAN_"))}
    env.update(extra)
    return env


@contextlib.contextmanager
def server(
    command: Sequence[str], *, port: int, cwd: Path, env: dict[str, str], log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``command`` pinned to SERVER_CPU in its own process group; stop the whole group."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["taskset", "-c", SERVER_CPU, *command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for_port(proc, port, log)
        yield proc
    finally:
        stop_group(proc)


def wait_for_port(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"server not listening on {port} after {READY_TIMEOUT} s:\n{tail(log)}")


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(STOP_TIMEOUT)
    # Workers left behind by a parent that died first are still in the group.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(STOP_TIMEOUT)


def tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _proc_stats() -> dict[int, tuple[int, int]]:
    """Every process: (parent pid, utime+stime+cutime+cstime in clock ticks)."""
    stats: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        # fields[0] is the state (field 3 of proc(5)): ppid is field 4, utime..cstime 14-17.
        stats[int(entry.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    return stats


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its descendants, reaped children included."""
    stats = _proc_stats()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
            todo.extend(children.get(pid, ()))
    return total / os.sysconf("SC_CLK_TCK")


def machine_busy() -> float:
    """CPU seconds all cores spent busy since boot (/proc/stat: all but idle, iowait and steal)."""
    with open("/proc/stat") as f:
        ticks = [int(x) for x in f.readline().split()[1:8]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def wait_until_quiet(limit: float, timeout: float) -> float:
    """Wait (up to ``timeout`` s) for a second in which the machine's busy share is below
    ``limit`` (a fraction of one core); returns the last busy share seen."""
    deadline = time.monotonic() + timeout
    while True:
        before = machine_busy()
        time.sleep(1.0)
        busy = machine_busy() - before
        if busy < limit or time.monotonic() >= deadline:
            return busy
        print(f"  waiting for a quieter machine ({busy:.0%} of a core busy)", flush=True)


def check_redirect(port: int) -> str:
    """One request before the load: the target must answer 302; returns its Location."""
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        conn.request("GET", PATH, headers={"User-Agent": USER_AGENT})
        response = conn.getresponse()
        response.read()
        if response.status != 302:
            raise RuntimeError(f"expected a 302 from port {port}, got {response.status}")
        return response.getheader("location") or ""
    finally:
        conn.close()


@dataclass
class WrkResult:
    summary: dict[str, float]
    cpu_seconds: float
    output: str


def run_wrk(port: int, *, seconds: float, connections: int, script: Path) -> WrkResult:
    command = [
        "taskset",
        "-c",
        WRK_CPU,
        "wrk",
        "-t1",
        f"-c{connections}",
        f"-d{seconds:g}s",
        "--latency",
        "--timeout",
        "5s",
        "-H",
        f"User-Agent: {USER_AGENT}",
        "-s",
        str(script),
        f"http://{HOST}:{port}{PATH}",
    ]
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        try:
            # wait4 rather than wait: it also returns wrk's own CPU time.
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        finally:
            if proc.returncode is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        output = out.read().decode(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"wrk failed ({proc.returncode}):\n{output}")
    line = next(x for x in output.splitlines() if x.startswith("WRK_JSON "))
    summary: dict[str, float] = json.loads(line.removeprefix("WRK_JSON "))
    report = "\n".join(x for x in output.splitlines() if not x.startswith("WRK_JSON "))
    return WrkResult(summary, usage.ru_utime + usage.ru_stime, report)


# --- databases ------------------------------------------------------------------------------


async def _seed(url: str) -> None:
    """One user, workspace and active campaign, through trilha's own domain functions."""
    engine = make_engine(url)
    now = datetime.now(UTC)
    try:
        async with engine.begin() as conn:
            user = await create_user(
                conn, email="bench@example.com", password=secrets.token_urlsafe(24), now=now
            )
            workspace = await create_workspace(conn, user, name="Bench", now=now)
            await create_campaign(
                conn, workspace, name="Bench", slug=SLUG, offer_url=OFFER_URL, now=now
            )
    finally:
        await engine.dispose()


def prepare(url: str) -> None:
    migrate(url)
    asyncio.run(_seed(url))


def count_clicks(url: str) -> int:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(clicks)).scalar_one())
    finally:
        engine.dispose()


def _admin(url: str) -> psycopg.Connection[tuple[Any, ...]]:
    parsed = make_url(url)
    return psycopg.connect(
        host=parsed.host,
        port=parsed.port or 5432,
        user=parsed.username,
        password=parsed.password,
        dbname=parsed.database,
        autocommit=True,
    )


@contextlib.contextmanager
def postgres_database(admin_url: str) -> Iterator[str]:
    name = f"trilha_bench_{uuid4().hex[:12]}"
    with _admin(admin_url) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with _admin(admin_url) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def postgres_backends(admin_url: str, database_url: str) -> list[int]:
    """The server processes serving trilha's connections to ``database_url`` (not autovacuum),
    if they run on this host."""
    name = make_url(database_url).database
    with _admin(admin_url) as admin:
        rows = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
            " AND backend_type = 'client backend'",
            (name,),
        ).fetchall()
    return [int(row[0]) for row in rows if os.path.exists(f"/proc/{row[0]}")]


def pids_cpu(pids: Sequence[int]) -> float:
    """CPU seconds of these processes (those that still run)."""
    stats = _proc_stats()
    return sum(stats[pid][1] for pid in pids if pid in stats) / os.sysconf("SC_CLK_TCK")


def postgres_settings(admin_url: str) -> dict[str, str]:
    names = ("server_version", "fsync", "synchronous_commit", "wal_sync_method", "commit_delay")
    with _admin(admin_url) as admin:
        return {n: str(admin.execute(f"SHOW {n}").fetchone()[0]) for n in names}  # type: ignore[index]


# --- one target -----------------------------------------------------------------------------


@dataclass
class Options:
    duration: float
    warmup: float
    connections: int
    postgres_url: str
    keep_logs: bool
    quiet_limit: float
    quiet_timeout: float


def measure(target: Target, round_no: int, options: Options, work: Path) -> Measurement:
    port = free_port()
    script = work / "report.lua"
    script.write_text(WRK_SCRIPT)
    here = Path(tempfile.mkdtemp(prefix=f"{target.name}-{round_no}-", dir=work))
    log = here / "server.log"
    with contextlib.ExitStack() as stack:
        count: Callable[[], int] | None = None
        db_pids: list[int] = []
        if target.kind == "nginx":
            prefix = here / "nginx"
            prefix.mkdir()
            conf = prefix / "nginx.conf"
            conf.write_text(
                NGINX_CONF.format(prefix=prefix, host=HOST, port=port, location=NGINX_LOCATION)
            )
            nginx = shutil.which("nginx") or "/usr/sbin/nginx"
            command = [nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")]
            proc = stack.enter_context(
                server(command, port=port, cwd=prefix, env=clean_env(), log=log)
            )
        elif target.kind == "granian":
            command = [
                str(BIN / "granian"),
                "--interface",
                "asgi",
                "--workers",
                "1",
                "--host",
                HOST,
                "--port",
                str(port),
                "--working-dir",
                str(ROOT),
                target.app,
            ]
            proc = stack.enter_context(
                server(command, port=port, cwd=ROOT, env=clean_env(), log=log)
            )
        else:
            if target.database == "sqlite":
                url = f"sqlite+aiosqlite:///{here / 'trilha.db'}"
            else:
                url = stack.enter_context(postgres_database(options.postgres_url))
            prepare(url)
            env = clean_env(
                TRILHA_DATABASE_URL=url,
                TRILHA_HOST=HOST,
                TRILHA_PORT=str(port),
                TRILHA_WORKERS="1",
                TRILHA_SQLITE_SYNCHRONOUS=target.synchronous,
            )
            # Exactly what an operator runs; the temporary cwd keeps any .env file out.
            command = [str(BIN / "trilha"), "serve"]
            proc = stack.enter_context(server(command, port=port, cwd=here, env=env, log=log))
            count = functools.partial(count_clicks, url)

        location = check_redirect(port)
        run_wrk(port, seconds=options.warmup, connections=options.connections, script=script)
        time.sleep(SETTLE)
        clicks_before = count() if count else 0
        quiet = wait_until_quiet(options.quiet_limit, options.quiet_timeout)
        cpu_before = tree_cpu(proc.pid)
        if target.database == "postgres":
            db_pids = postgres_backends(options.postgres_url, url)
        db_before = pids_cpu(db_pids)
        busy_before = machine_busy()
        result = run_wrk(
            port, seconds=options.duration, connections=options.connections, script=script
        )
        cpu = tree_cpu(proc.pid) - cpu_before
        db_cpu = pids_cpu(db_pids) - db_before if db_pids else None
        busy = machine_busy() - busy_before
        time.sleep(SETTLE)
        clicks_stored = count() - clicks_before if count else None

    s = result.summary
    requests = int(s["requests"])
    seconds = s["duration_us"] / 1e6
    errors = {
        k.removesuffix("_errors"): int(v) for k, v in s.items() if k.endswith("_errors") and v
    }
    ok = requests - int(s["status_errors"])
    per_request = 1e6 / requests if requests else float("nan")
    measurement = Measurement(
        target=target.name,
        round=round_no,
        requests=requests,
        ok_responses=ok,
        errors=errors,
        seconds=round(seconds, 3),
        rps=round(requests / seconds, 1),
        p50_ms=s["p50_us"] / 1000,
        p90_ms=s["p90_us"] / 1000,
        p99_ms=s["p99_us"] / 1000,
        p999_ms=s["p999_us"] / 1000,
        max_ms=s["max_us"] / 1000,
        server_cpu_us=round(cpu * per_request, 1),
        wrk_cpu_pct=round(100 * result.cpu_seconds / seconds, 1),
        other_cpu_pct=round(100 * (busy - cpu - result.cpu_seconds - (db_cpu or 0.0)) / seconds, 1),
        db_cpu_us=None if db_cpu is None else round(db_cpu * per_request, 1),
        clicks_stored=clicks_stored,
        durable=None if clicks_stored is None else clicks_stored >= ok,
        extra={"location": location, "wrk": result.output, "busy_before_run": quiet},
    )
    if not options.keep_logs:
        shutil.rmtree(here, ignore_errors=True)
    return measurement


# --- report ---------------------------------------------------------------------------------


def median_of(runs: list[Measurement], name: str) -> float | None:
    values = [getattr(r, name) for r in runs if getattr(r, name) is not None]
    return statistics.median(values) if values else None


def summarize(measurements: list[Measurement]) -> dict[str, dict[str, float | None]]:
    names = dict.fromkeys(m.target for m in measurements)
    return {
        name: {
            key: median_of([m for m in measurements if m.target == name], key)
            for key in (
                "rps",
                "p50_ms",
                "p99_ms",
                "server_cpu_us",
                "db_cpu_us",
                "wrk_cpu_pct",
                "other_cpu_pct",
            )
        }
        for name in names
    }


def ratios(summary: dict[str, dict[str, float | None]]) -> list[dict[str, Any]]:
    found = []
    for trilha, base, goal in GOALS:
        if trilha in summary and base in summary:
            a, b = summary[trilha]["rps"], summary[base]["rps"]
            if a is not None and b:
                value = a / b
                met = None if goal is None else value >= goal
                found.append(
                    {"target": trilha, "baseline": base, "ratio": round(value, 3), "goal": goal}
                    | {"met": met}
                )
    return found


def render(measurements: list[Measurement], summary: dict[str, dict[str, float | None]]) -> str:
    def cell(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    rows = [
        "| target | req/s | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req "
        "| wrk CPU % | other load % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in summary.items():
        rows.append(
            f"| {name} | {cell(s['rps'], ',.0f')} | {cell(s['p50_ms'], '.2f')} "
            f"| {cell(s['p99_ms'], '.2f')} | {cell(s['server_cpu_us'], '.0f')} "
            f"| {cell(s['db_cpu_us'], '.0f')} | {cell(s['wrk_cpu_pct'], '.0f')} "
            f"| {cell(s['other_cpu_pct'], '.0f')} |"
        )
    lines = ["", *rows, ""]
    for r in ratios(summary):
        goal = (
            ""
            if r["goal"] is None
            else f" (goal >= {r['goal']}: {'met' if r['met'] else 'MISSED'})"
        )
        lines.append(f"{r['target']} / {r['baseline']} = {r['ratio']:.3f}{goal}")
    lines.append("")
    for m in measurements:
        if m.clicks_stored is not None:
            verdict = "ok" if m.durable else "LOST CLICKS"
            lines.append(
                f"{m.target} round {m.round}: {m.clicks_stored} clicks stored, "
                f"{m.ok_responses} 2xx/3xx counted by wrk: {verdict}"
            )
        if m.errors:
            lines.append(f"{m.target} round {m.round}: wrk errors {m.errors}")
    return "\n".join(lines)


def machine(postgres_url: str, targets: Sequence[Target]) -> dict[str, Any]:
    info: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "cpu_model": next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        ),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "loadavg_before": Path("/proc/loadavg").read_text().split()[:3],
    }
    versions = {
        "granian": [str(BIN / "granian"), "--version"],
        "nginx": ["nginx", "-v"],
    }
    for name, command in versions.items():
        with contextlib.suppress(OSError):
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            info[name] = (done.stdout + done.stderr).strip()
    if any(t.database == "postgres" for t in targets):
        info["postgres"] = postgres_settings(postgres_url)
    return info


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per target")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per target")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (-c)")
    parser.add_argument("--rounds", type=int, default=3, help="times to run every target")
    parser.add_argument(
        "--targets",
        default=",".join(TARGETS),
        help=f"comma-separated subset of: {', '.join(TARGETS)}",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("TRILHA_BENCH_POSTGRES_URL", DEFAULT_POSTGRES),
        help="a database on the PostgreSQL server to create the bench database from",
    )
    parser.add_argument(
        "--quiet-timeout",
        type=float,
        default=60.0,
        help="before each measured run, wait up to this many seconds for a quiet machine",
    )
    parser.add_argument(
        "--quiet-limit",
        type=float,
        default=0.25,
        help="quiet means at most this share of one core busy (with --quiet-timeout)",
    )
    parser.add_argument(
        "--noisy-retries",
        type=int,
        default=4,
        help="measure a target again (up to this many times) when other processes used more "
        "than --noisy-limit %% of a core during its run",
    )
    parser.add_argument(
        "--noisy-limit", type=float, default=25.0, help="see --noisy-retries (%% of one core)"
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep the servers' logs")
    parser.add_argument("--output", type=Path, help="JSON file (default: bench/results/...)")
    args = parser.parse_args(argv)
    if make_url(args.postgres_url).host not in (HOST, "localhost"):
        parser.error("the PostgreSQL server must be on the loopback interface")
    targets = [TARGETS[name.strip()] for name in args.targets.split(",") if name.strip()]
    options = Options(
        duration=args.duration,
        warmup=args.warmup,
        connections=args.connections,
        postgres_url=args.postgres_url,
        keep_logs=args.keep_logs,
        quiet_limit=args.quiet_limit,
        quiet_timeout=args.quiet_timeout,
    )
    started = datetime.now(UTC)
    info = machine(args.postgres_url, targets)
    measurements: list[Measurement] = []
    discarded: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="trilha-bench-") as tmp:
        work = Path(tmp)
        for round_no in range(1, args.rounds + 1):
            for target in targets:
                for attempt in range(1, args.noisy_retries + 2):
                    print(f"round {round_no}: {target.name} ...", flush=True)
                    m = measure(target, round_no, options, work)
                    print(
                        f"  {m.rps:,.0f} req/s  p50 {m.p50_ms:.2f} ms  p99 {m.p99_ms:.2f} ms  "
                        f"server {m.server_cpu_us:.0f} µs/req  wrk {m.wrk_cpu_pct:.0f}% CPU  "
                        f"others {m.other_cpu_pct:.0f}%",
                        flush=True,
                    )
                    if m.other_cpu_pct <= args.noisy_limit or attempt > args.noisy_retries:
                        measurements.append(m)
                        break
                    print(f"  noisy (others above {args.noisy_limit:g}%): measuring again")
                    discarded.append(m)
        if args.keep_logs:
            kept = RESULTS / f"logs-{started:%Y%m%dT%H%M%S}"
            shutil.copytree(work, kept, ignore=shutil.ignore_patterns("*.db*"))
            print(f"logs kept in {kept}")
    summary = summarize(measurements)
    print(render(measurements, summary))
    output = args.output or RESULTS / f"redirect-{started:%Y%m%dT%H%M%S}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "started": started.isoformat(),
        "options": {**asdict(options), "targets": [t.name for t in targets]},
        "machine": info,
        "summary": summary,
        "ratios": ratios(summary),
        "runs": [asdict(m) for m in measurements],
        "discarded_noisy_runs": [asdict(m) for m in discarded],
    }
    output.write_text(json.dumps(report, indent=2))
    print(f"\nwritten to {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}")
    durable = all(m.durable is not False for m in measurements)
    return 0 if durable else 1


if __name__ == "__main__":
    sys.exit(main())
