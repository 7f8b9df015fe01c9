"""What bench/redirect.py and bench/postback.py share: servers, wrk, CPU accounting, databases,
the report and the round loop. A benchmark is a ``Benchmark``: its targets and goals, what it seeds
into trilha's fresh database, what wrk sends, and what it checks after each run.

For each target and round ``measure`` starts a fresh server pinned to CPU 0 (nginx from a temporary
prefix, granian for the baselines in bench/baselines.py, or ``trilha serve`` on a fresh SQLite file
or PostgreSQL database), sends one request to check the answer, runs wrk (one thread, pinned to
CPU 1) for a warm-up and then for the measured run, and reads the CPU the server's process tree
(and, for PostgreSQL, the server processes serving trilha's connections) used from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from uuid import uuid4

import psycopg
from sqlalchemy import Connection, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection

from bench.baselines import LOCATION, POSTBACK_ANSWER
from bench.prefill import prefill, sizes
from trilha.accounts import create_user
from trilha.campaigns import create_campaign
from trilha.db.engine import make_engine, sync_url
from trilha.db.migrate import migrate
from trilha.passwords import hash_password
from trilha.workspaces import Workspace, create_workspace

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"
SERVER_CPU = "0"
WRK_CPU = "1"
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1/test"

READY_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0
SETTLE = 0.5  # seconds for in-flight commits to finish before stored rows are counted

# wrk prints its own report, then this line: the numbers the script reads. Appended to each
# benchmark's own Lua (its request generation, if any).
WRK_REPORT = """
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

# One nginx for both benchmarks: the redirect's 302 and the postback's JSON answer, as the
# granian baselines in bench/baselines.py answer them.
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
    location = /postback {{
      default_type application/json;
      add_header cache-control no-store;
      return 200 '{postback_answer}';
    }}
  }}
}}
"""


@dataclass(frozen=True)
class Target:
    name: str
    kind: str  # nginx | granian | trilha
    app: str = ""  # granian's APP for the baselines
    database: str = ""  # sqlite | postgres: trilha's, or a granian baseline's that stores
    synchronous: str = "FULL"
    prefilled: bool = False  # on the run's prefilled database (--prefilled) instead of an empty one


PREFILLED = "@prefilled"  # appended to the name of a target's run on the prefilled database
PREFILLED_GOAL = 0.9  # the least prefilled/empty the issue asks for


def with_prefilled(targets: Sequence[Target]) -> list[Target]:
    """Each target that has a database, followed by the same target on the prefilled one."""
    found: list[Target] = []
    for target in targets:
        found.append(target)
        if target.database:
            found.append(replace(target, name=target.name + PREFILLED, prefilled=True))
    return found


NGINX = Target("nginx", "nginx")
STARLETTE = Target("starlette", "granian", app="bench.baselines:starlette_app")
ASGI = Target("asgi", "granian", app="bench.baselines:asgi_app")
TRILHA = (
    Target("trilha-sqlite-full", "trilha", database="sqlite", synchronous="FULL"),
    Target("trilha-sqlite-normal", "trilha", database="sqlite", synchronous="NORMAL"),
    Target("trilha-postgres", "trilha", database="postgres"),
)


def targets(*diagnostics: Target) -> dict[str, Target]:
    """A benchmark's targets by name: the baselines, its own diagnostics, then trilha's."""
    return {t.name: t for t in (NGINX, STARLETTE, ASGI, *diagnostics, *TRILHA)}


# (trilha target, baseline, the least trilha/baseline the issue asks for, None: reported only)
Goal = tuple[str, str, float | None]


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
    # Bytes the server's process tree sent to the disk (its pages dirtied: on SQLite the WAL and
    # the checkpoints into the database), per request; not PostgreSQL's own writes.
    disk_bytes: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def verdicts(self) -> list[str]:
        """Lines of the report on what was checked after the run (a benchmark's subclass)."""
        return []

    @property
    def failed(self) -> bool:
        """A check after the run failed: the benchmark exits 1."""
        return False


def fields_of(m: Measurement) -> dict[str, Any]:
    """The measurement's fields, to build a benchmark's subclass of it from."""
    return {f.name: getattr(m, f.name) for f in fields(m)}


class Benchmark(ABC):
    """One benchmark: its targets and goals, its workload, its checks. ``measure`` calls, for
    each target in turn: ``prepare`` (then starts the server), ``probe``, ``wrk_args`` before each
    wrk run, ``count`` before and after the measured run (trilha only), then ``check``."""

    name: str  # bench/results/<name>-<time>.json
    description: str  # the module docstring: its first paragraph is --help's description
    targets: Mapping[str, Target]
    goals: Sequence[Goal]
    path: str  # the URL wrk is given (the request itself unless the Lua has a request function)
    headers: Mapping[str, str]  # sent by wrk with every request
    server_env: Mapping[str, str] = {}  # more environment for trilha's server
    workload: Mapping[str, Any] = {}  # what the options changed in the requests, for the results

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The benchmark's own command-line options (none by default)."""
        del parser

    def configure(self, args: argparse.Namespace) -> None:
        """Apply the benchmark's own options, before any target starts (none by default)."""
        del args

    @abstractmethod
    def prepare(self, url: str | None) -> str:
        """Seed trilha's fresh, migrated database at ``url`` (None: a baseline, no database);
        return the Lua wrk runs against this target before WRK_REPORT (may be empty)."""

    def wrk_args(self) -> list[str]:
        """Arguments for the Lua ``init`` function of the next wrk run."""
        return []

    def snapshot(self) -> dict[str, Any]:
        """What ``prepare`` left in the benchmark (a token, ids), to measure again on the same
        prefilled database without seeding it again."""
        return dict(vars(self))

    def restore(self, snapshot: dict[str, Any]) -> None:
        vars(self).update(snapshot)

    @abstractmethod
    def probe(self, port: int) -> dict[str, Any]:
        """One request before the load: raise unless the target answers as it should; the
        result goes into the measurement's ``extra``."""

    @abstractmethod
    def count(self, url: str) -> dict[str, int]:
        """What trilha's database holds: counted before and after the measured run."""

    @abstractmethod
    def check(self, m: Measurement, stored: dict[str, int] | None) -> Measurement:
        """The measurement with the benchmark's checks: ``stored`` is what ``count`` grew by
        during the measured run (None for the baselines)."""


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


def start_target(
    target: Target,
    *,
    port: int,
    here: Path,
    url: str | None,
    stack: contextlib.ExitStack,
    server_env: Mapping[str, str],
) -> subprocess.Popen[bytes]:
    """Start the target's server (stopped when ``stack`` closes); ``url`` is trilha's database."""
    log = here / "server.log"
    if target.kind == "nginx":
        prefix = here / "nginx"
        prefix.mkdir()
        conf = prefix / "nginx.conf"
        conf.write_text(
            NGINX_CONF.format(
                prefix=prefix,
                host=HOST,
                port=port,
                location=LOCATION,
                postback_answer=POSTBACK_ANSWER,
            )
        )
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        command = [nginx, "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")]
        return stack.enter_context(server(command, port=port, cwd=prefix, env=clean_env(), log=log))
    if target.kind == "granian":
        command = [
            str(BIN / "granian"),
            "--interface",
            "asgi",
            "--loop",
            "uvloop",  # as trilha serve runs
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
        if url is None:
            env = clean_env()
        elif target.database == "postgres":  # the driver's own URL, without SQLAlchemy's +psycopg
            env = clean_env(
                BENCH_POSTGRES_URL=make_url(url)
                .set(drivername="postgresql")
                .render_as_string(hide_password=False)
            )
        else:
            env = clean_env(BENCH_SQLITE_DB=make_url(url).database or "")
        return stack.enter_context(server(command, port=port, cwd=ROOT, env=env, log=log))
    assert url is not None
    env = clean_env(
        **server_env,
        TRILHA_DATABASE_URL=url,
        TRILHA_HOST=HOST,
        TRILHA_PORT=str(port),
        TRILHA_WORKERS="1",
        TRILHA_SQLITE_SYNCHRONOUS=target.synchronous,
    )
    # Exactly what an operator runs; the temporary cwd keeps any .env file out.
    command = [str(BIN / "trilha"), "serve"]
    return stack.enter_context(server(command, port=port, cwd=here, env=env, log=log))


def http_get(
    port: int, path: str, headers: Mapping[str, str]
) -> tuple[int, http.client.HTTPMessage, bytes]:
    """One GET to the target: (status, headers, body)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=10)
    try:
        conn.request("GET", path, headers=dict(headers))
        response = conn.getresponse()
        return response.status, response.headers, response.read()
    finally:
        conn.close()


# --- CPU accounting --------------------------------------------------------------------------


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


def tree_disk_bytes(root: int) -> int:
    """Bytes ``root`` and its descendants caused to be written to storage (/proc/<pid>/io's
    write_bytes, counted when a page is dirtied)."""
    stats = _proc_stats()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError, ValueError, StopIteration):
            with open(f"/proc/{pid}/io") as f:
                line = next(x for x in f if x.startswith("write_bytes:"))
            total += int(line.split()[1])
        todo.extend(children.get(pid, ()))
    return total


def pids_cpu(pids: Sequence[int]) -> float:
    """CPU seconds of these processes (those that still run)."""
    stats = _proc_stats()
    return sum(stats[pid][1] for pid in pids if pid in stats) / os.sysconf("SC_CLK_TCK")


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


# --- wrk -----------------------------------------------------------------------------------


@dataclass
class WrkResult:
    summary: dict[str, float]
    cpu_seconds: float
    output: str


def run_wrk(
    port: int,
    *,
    seconds: float,
    connections: int,
    script: Path,
    path: str,
    headers: Mapping[str, str],
    args: Sequence[str] = (),
) -> WrkResult:
    """wrk with one thread pinned to WRK_CPU; ``args`` go to the script's ``init``."""
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
        *(option for name, value in headers.items() for option in ("-H", f"{name}: {value}")),
        "-s",
        str(script),
        f"http://{HOST}:{port}{path}",
        *(["--", *args] if args else []),
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


async def seed_campaign(
    conn: AsyncConnection, *, slug: str, offer_url: str, now: datetime
) -> Workspace:
    """One user, workspace and active campaign, through trilha's own domain functions."""
    password_hash = await hash_password(secrets.token_urlsafe(24))
    user = await create_user(conn, email="bench@example.com", password_hash=password_hash, now=now)
    workspace = await create_workspace(conn, user, name="Bench", now=now)
    await create_campaign(conn, workspace, name="Bench", slug=slug, offer_url=offer_url, now=now)
    return workspace


def seed(url: str, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
    """Run ``work`` in one transaction on trilha's database, through its own async engine."""

    async def run() -> T:
        engine = make_engine(url)
        try:
            async with engine.begin() as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def query(url: str, work: Callable[[Connection], T]) -> T:
    """Run ``work`` on a blocking connection to trilha's database (counting after a run)."""
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return work(conn)
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
def postgres_database(admin_url: str, *, template: str | None = None) -> Iterator[str]:
    """A new database on the server (a copy of ``template``, if given), dropped after."""
    name = f"trilha_bench_{uuid4().hex[:12]}"
    with _admin(admin_url) as admin:
        copied = ""
        if template:
            copied = f' TEMPLATE "{template}"'
            # PostgreSQL 15's default copies a database block by block through the WAL: minutes
            # for a prefilled one, which each round now copies; FILE_COPY copies its files.
            if admin.info.server_version >= 150000:
                copied += " STRATEGY FILE_COPY"
        admin.execute(f'CREATE DATABASE "{name}"{copied}')
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
    prefilled: int = 0  # clicks in the prefilled databases (0: none)
    prefilled_days: int = 90
    prefilled_conversions: int = 0
    prefilled_cache: str | None = None  # the folder filled databases are kept in between runs


@dataclass
class _Prefilled:
    url: str
    lua: str
    snapshot: dict[str, Any]


class PrefilledDatabases:
    """One prefilled database per kind (sqlite, postgres) for the whole run, made the first
    time a target needs it: migrated, seeded by the benchmark, then filled by bench/prefill.py.
    Every round of every target of that kind runs on a fresh copy of it, as every empty round
    runs on a fresh database: on one shared copy the rounds' conversions piled up on the
    benchmark's clicks, and the later rounds measured that pile, not the prefilled rows."""

    def __init__(self, options: Options, work: Path, stack: contextlib.ExitStack) -> None:
        self.options = options
        self.work = work
        self.stack = stack
        self.made: dict[str, _Prefilled] = {}
        self.fills: dict[str, dict[str, Any]] = {}

    def get(
        self, bench: Benchmark, kind: str, here: Path, stack: contextlib.ExitStack
    ) -> tuple[str, str]:
        """A fresh copy of the seeded database (in ``here``, or a PostgreSQL database dropped
        with ``stack``) and the benchmark's Lua for it; the benchmark as prepare left it."""
        seeded = self._seeded(bench, kind)
        bench.restore(seeded.snapshot)
        if kind == "sqlite":
            copy = here / "trilha.db"
            shutil.copyfile(make_url(seeded.url).database or "", copy)
            with copy.open("rb+") as written:  # on disk before the round, not flushed during it
                os.fsync(written.fileno())
            stack.callback(_remove_sqlite, copy)  # gigabytes a copy: not kept past the round
            return f"sqlite+aiosqlite:///{copy}", seeded.lua
        name = make_url(seeded.url).database
        return stack.enter_context(
            postgres_database(self.options.postgres_url, template=name)
        ), seeded.lua

    def _seeded(self, bench: Benchmark, kind: str) -> _Prefilled:
        found = self.made.get(kind)
        if found is None:
            if self.options.prefilled_cache is not None:
                url = self._copy_of_cache(kind)
                lua = bench.prepare(url)
            else:
                if kind == "sqlite":
                    url = f"sqlite+aiosqlite:///{self.work / 'prefilled.db'}"
                else:
                    url = self.stack.enter_context(postgres_database(self.options.postgres_url))
                migrate(url)
                lua = bench.prepare(url)
                self.fills[kind] = self._fill(url, kind)
            if kind == "sqlite":
                query(url, _checkpoint)  # the whole database in its file, to be copied
            found = self.made[kind] = _Prefilled(url, lua, bench.snapshot())
        return found

    def _fill(self, url: str, kind: str) -> dict[str, Any]:
        print(f"prefilling {kind} with {self.options.prefilled:,} clicks ...", flush=True)
        stats = prefill(
            url,
            clicks_count=self.options.prefilled,
            days=self.options.prefilled_days,
            conversions_count=self.options.prefilled_conversions,
        )
        print(f"  done in {stats.seconds:,.0f} s", flush=True)
        return {**asdict(stats), "sizes": sizes(url)}

    def _copy_of_cache(self, kind: str) -> str:
        """--prefilled-cache: a copy of the filled database kept from an earlier run (filled
        now, without the benchmark's seed, if there is none yet): a SQLite file in the cache
        folder, or a PostgreSQL database used as a template. The benchmark seeds the copy."""
        options = self.options
        assert options.prefilled_cache is not None
        cache = Path(options.prefilled_cache)
        name = f"trilha_prefilled_{options.prefilled}_{options.prefilled_days}"
        name += f"_{options.prefilled_conversions}"
        if kind == "sqlite":
            kept = cache / f"{name}.db"
            if not kept.exists():
                filling = cache / f"{name}.filling.db"
                filling.unlink(missing_ok=True)
                url = f"sqlite+aiosqlite:///{filling}"
                migrate(url)
                self.fills[kind] = self._fill(url, kind)
                filling.rename(kept)
                for lock in cache.glob(f"{filling.name}.*"):  # the migration's lock file
                    lock.unlink()
            copy = self.work / "prefilled.db"
            shutil.copyfile(kept, copy)
            return f"sqlite+aiosqlite:///{copy}"
        with _admin(options.postgres_url) as admin:
            have = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if have is None:
            with _admin(options.postgres_url) as admin:
                admin.execute(f'CREATE DATABASE "{name}_filling"')
            server = make_url(options.postgres_url)
            fresh = server.set(database=f"{name}_filling").render_as_string(hide_password=False)
            migrate(fresh)
            self.fills[kind] = self._fill(fresh, kind)
            with _admin(options.postgres_url) as admin:
                admin.execute(f'ALTER DATABASE "{name}_filling" RENAME TO "{name}"')
        return self.stack.enter_context(postgres_database(options.postgres_url, template=name))


def _checkpoint(conn: Connection) -> None:
    conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def _remove_sqlite(path: Path) -> None:
    for file in (path, *path.parent.glob(f"{path.name}-*")):
        file.unlink(missing_ok=True)


def measure(
    bench: Benchmark,
    target: Target,
    round_no: int,
    options: Options,
    work: Path,
    prefilled: PrefilledDatabases,
) -> Measurement:
    port = free_port()
    here = Path(tempfile.mkdtemp(prefix=f"{target.name}-{round_no}-", dir=work))
    script = here / "wrk.lua"
    with contextlib.ExitStack() as stack:
        url: str | None = None
        if target.prefilled:
            url, lua = prefilled.get(bench, target.database, here, stack)
        else:
            if target.database:
                if target.database == "sqlite":
                    url = f"sqlite+aiosqlite:///{here / 'trilha.db'}"
                else:
                    url = stack.enter_context(postgres_database(options.postgres_url))
                migrate(url)
            lua = bench.prepare(url)
        script.write_text(lua + WRK_REPORT)
        proc = start_target(
            target, port=port, here=here, url=url, stack=stack, server_env=bench.server_env
        )

        def wrk(seconds: float) -> WrkResult:
            return run_wrk(
                port,
                seconds=seconds,
                connections=options.connections,
                script=script,
                path=bench.path,
                headers=bench.headers,
                args=bench.wrk_args(),
            )

        probe = bench.probe(port)
        wrk(options.warmup)
        time.sleep(SETTLE)
        before = bench.count(url) if url else {}
        quiet = wait_until_quiet(options.quiet_limit, options.quiet_timeout)
        cpu_before = tree_cpu(proc.pid)
        disk_before = tree_disk_bytes(proc.pid)
        db_pids: list[int] = []
        if url and target.database == "postgres":
            db_pids = postgres_backends(options.postgres_url, url)
        db_before = pids_cpu(db_pids)
        busy_before = machine_busy()
        result = wrk(options.duration)
        cpu = tree_cpu(proc.pid) - cpu_before
        disk = tree_disk_bytes(proc.pid) - disk_before
        db_cpu = pids_cpu(db_pids) - db_before if db_pids else None
        busy = machine_busy() - busy_before
        time.sleep(SETTLE)
        stored = None
        if url:
            after = bench.count(url)
            stored = {key: value - before.get(key, 0) for key, value in after.items()}

    s = result.summary
    requests = int(s["requests"])
    seconds = s["duration_us"] / 1e6
    errors = {
        k.removesuffix("_errors"): int(v) for k, v in s.items() if k.endswith("_errors") and v
    }
    per_request = 1e6 / requests if requests else float("nan")
    measurement = Measurement(
        target=target.name,
        round=round_no,
        requests=requests,
        ok_responses=requests - int(s["status_errors"]),
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
        disk_bytes=round(disk / requests) if requests else None,
        extra={**probe, "wrk": result.output, "busy_before_run": quiet},
    )
    if not options.keep_logs:
        shutil.rmtree(here, ignore_errors=True)
    return bench.check(measurement, stored)


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
                "disk_bytes",
                "wrk_cpu_pct",
                "other_cpu_pct",
            )
        }
        for name in names
    }


def ratios(
    summary: dict[str, dict[str, float | None]], goals: Sequence[Goal]
) -> list[dict[str, Any]]:
    found = []
    for trilha, base, goal in goals:
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


def render(
    measurements: list[Measurement],
    summary: dict[str, dict[str, float | None]],
    goals: Sequence[Goal],
) -> str:
    def cell(value: float | None, fmt: str) -> str:
        return "-" if value is None else format(value, fmt)

    rows = [
        "| target | req/s | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req "
        "| disk bytes/req | wrk CPU % | other load % |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in summary.items():
        rows.append(
            f"| {name} | {cell(s['rps'], ',.0f')} | {cell(s['p50_ms'], '.2f')} "
            f"| {cell(s['p99_ms'], '.2f')} | {cell(s['server_cpu_us'], '.0f')} "
            f"| {cell(s['db_cpu_us'], '.0f')} | {cell(s['disk_bytes'], ',.0f')} "
            f"| {cell(s['wrk_cpu_pct'], '.0f')} "
            f"| {cell(s['other_cpu_pct'], '.0f')} |"
        )
    lines = ["", *rows, ""]
    for r in ratios(summary, goals):
        goal = (
            ""
            if r["goal"] is None
            else f" (goal >= {r['goal']}: {'met' if r['met'] else 'MISSED'})"
        )
        lines.append(f"{r['target']} / {r['baseline']} = {r['ratio']:.3f}{goal}")
    lines.append("")
    for m in measurements:
        lines.extend(m.verdicts())
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


# --- the command ----------------------------------------------------------------------------


def parse_args(bench: Benchmark, argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=bench.description.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per target")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per target")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections (-c)")
    parser.add_argument("--rounds", type=int, default=3, help="times to run every target")
    parser.add_argument(
        "--targets",
        default=",".join(bench.targets),
        help=f"comma-separated subset of: {', '.join(bench.targets)}",
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
    parser.add_argument(
        "--prefilled",
        type=int,
        default=0,
        help="also run every target that stores on a database prefilled with this many clicks "
        "(bench/prefill.py; 5000000 in docs/performance.md), reporting prefilled/empty",
    )
    parser.add_argument("--prefilled-days", type=int, default=90, help="days the clicks span")
    parser.add_argument(
        "--prefilled-conversions",
        type=int,
        help="conversions in the prefilled databases (default: one for every 50 clicks)",
    )
    parser.add_argument(
        "--prefilled-cache",
        type=Path,
        help="keep the prefilled databases here (PostgreSQL's on its server, as templates) and "
        "run on copies of them, filling them only the first time",
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep the servers' logs")
    parser.add_argument("--output", type=Path, help="JSON file (default: bench/results/...)")
    bench.add_arguments(parser)
    args = parser.parse_args(argv)
    if make_url(args.postgres_url).host not in (HOST, "localhost"):
        parser.error("the PostgreSQL server must be on the loopback interface")
    return args


def main(bench: Benchmark, argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run every target for every round, report; 1 if a check failed."""
    args = parse_args(bench, argv)
    bench.configure(args)
    targets = [bench.targets[name.strip()] for name in args.targets.split(",") if name.strip()]
    goals = list(bench.goals)
    if args.prefilled:
        targets = with_prefilled(targets)
        goals += [
            (t.name, t.name.removesuffix(PREFILLED), PREFILLED_GOAL) for t in targets if t.prefilled
        ]
    options = Options(
        duration=args.duration,
        warmup=args.warmup,
        connections=args.connections,
        postgres_url=args.postgres_url,
        keep_logs=args.keep_logs,
        quiet_limit=args.quiet_limit,
        quiet_timeout=args.quiet_timeout,
        prefilled=args.prefilled,
        prefilled_days=args.prefilled_days,
        prefilled_conversions=(
            args.prefilled // 50
            if args.prefilled_conversions is None
            else args.prefilled_conversions
        ),
        prefilled_cache=str(args.prefilled_cache) if args.prefilled_cache else None,
    )
    started = datetime.now(UTC)
    info = machine(args.postgres_url, targets)
    measurements: list[Measurement] = []
    discarded: list[Measurement] = []
    with (
        tempfile.TemporaryDirectory(prefix="trilha-bench-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        work = Path(tmp)
        prefilled = PrefilledDatabases(options, work, stack)
        for round_no in range(1, args.rounds + 1):
            for target in targets:
                for attempt in range(1, args.noisy_retries + 2):
                    print(f"round {round_no}: {target.name} ...", flush=True)
                    m = measure(bench, target, round_no, options, work, prefilled)
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
            # Not the databases, nor the Lua (the postback benchmark's holds a workspace token).
            shutil.copytree(work, kept, ignore=shutil.ignore_patterns("*.db*", "*.lua"))
            print(f"logs kept in {kept}")
    summary = summarize(measurements)
    print(render(measurements, summary, goals))
    output = args.output or RESULTS / f"{bench.name}-{started:%Y%m%dT%H%M%S}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "started": started.isoformat(),
        "options": {**asdict(options), "targets": [t.name for t in targets]},
        "workload": dict(bench.workload),
        "machine": info,
        "summary": summary,
        "ratios": ratios(summary, goals),
        "prefilled": prefilled.fills,
        "runs": [asdict(m) for m in measurements],
        "discarded_noisy_runs": [asdict(m) for m in discarded],
    }
    output.write_text(json.dumps(report, indent=2))
    print(f"\nwritten to {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}")
    return 1 if any(m.failed for m in measurements) else 0
