"""Several `trilha serve` and `trilha worker` processes on one database, as on several machines:
a change made through one is in effect in every other within BOUND, and what must happen once
(a conversion, an orphan's attachment, a delivery, a sign-in limit) happens once. The same again
through pgbouncer in transaction mode, in front of a PostgreSQL database of the test's own."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from uuid import uuid4

import httpx
import psycopg
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import make_destination
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, make_campaign, make_domain, make_user, make_workspace
from tests.postbacks.shop import make_merchant
from tests.test_serve import free_port, trilha_serve
from trilha.campaigns import update_campaign
from trilha.db.engine import make_engine
from trilha.db.migrate import MIGRATION_LOCK_KEY, migrate
from trilha.db.schema import clicks, conversions, deliveries, domains
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.errors import MigrationLocked
from trilha.maintenance import ORPHAN_INTERVAL
from trilha.merchants import update_merchant
from trilha.settings import Settings

# Set-up (campaigns, merchants, domains) is read from the database by each request or each
# postback batch's transaction, never kept in a process: a change is in effect at once, and
# BOUND only leaves room for a slow machine.
BOUND = 2.0  # seconds
OFFER = "https://oferta.example.com/lp?subid={click_id}"
FALLBACK = "https://example.com/pausada"
OLD_SECRET, NEW_SECRET = "pB3+q9/Zx2w=Lm7k", "Qz8-rT4/Wn1=Ks6j"
HOST = "go.example.com"
PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


async def test_processes_on_one_database_agree(
    db: AsyncEngine, database_url: str, settings: Settings, tmp_path: Path, receiver: Receiver
) -> None:
    await _agree(db, database_url, settings, tmp_path, receiver)


async def test_processes_through_pgbouncer_agree(
    settings: Settings, tmp_path: Path, receiver: Receiver
) -> None:
    """Always on PostgreSQL (pgbouncer pools nothing else): a database of the test's own on the
    local server, which the processes migrate through pgbouncer, racing for the lock."""
    with _postgres_database() as name, _pgbouncer(name) as pooled:
        direct = f"{PG_SERVER}/{name}"
        db = make_engine(direct)
        try:
            await _agree(
                db,
                pooled,
                settings.model_copy(update={"database_url": direct}),
                tmp_path,
                receiver,
                database_pooler="transaction",
            )
        finally:
            await db.dispose()


def test_a_migration_through_pgbouncer_waits_for_the_lock_and_leaves_none_behind() -> None:
    """The lock is the migration transaction's: through pgbouncer a session lock may be taken
    on one server connection and let go on another (which holds none), staying behind."""
    with _postgres_database() as name, _pgbouncer(name) as pooled:
        direct = f"host=127.0.0.1 user=postgres dbname={name}"
        with psycopg.connect(direct, autocommit=True) as other:
            other.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
            with pytest.raises(MigrationLocked, match="PostgreSQL backend"):
                migrate(pooled, lock_wait=0.5, pooler="transaction")
            other.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))

            migrate(pooled, pooler="transaction")
            migrate(pooled, lock_wait=0.5, pooler="transaction")  # finds the lock free again

            held = other.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database ="
                " (SELECT oid FROM pg_database WHERE datname = current_database())"
            )
            assert held.fetchone() == (0,)
            version = other.execute("SELECT version_num FROM alembic_version").fetchone()
            assert version is not None


async def _agree(
    db: AsyncEngine,
    database_url: str,
    settings: Settings,
    tmp_path: Path,
    receiver: Receiver,
    **env: str,
) -> None:
    with ExitStack() as stack:
        # Migrating at the same time: one takes the lock, the others wait for it.
        servers = [
            stack.enter_context(
                trilha_serve(
                    database_url,
                    tmp_path,
                    delivery_worker="false",
                    login_limit_per_account="3",
                    **env,
                )
            )[0]
            for _ in range(2)
        ]
        for _ in range(2):
            stack.enter_context(_trilha_worker(database_url, tmp_path, **env))
        async with httpx.AsyncClient() as http:
            await _campaign_paused_in_one_is_paused_in_all(db, http, servers)
            await _domain_verified_in_one_routes_in_all(db, http, servers)
            await _secret_rotated_in_one_is_refused_by_all(db, http, servers)
            await _one_postback_to_all_counts_once(db, http, servers, settings, receiver)
            await _orphan_is_attached_once(db, http, servers)
            await _failed_sign_ins_over_all_count_together(db, http, servers)


async def _campaign_paused_in_one_is_paused_in_all(
    db: AsyncEngine, http: httpx.AsyncClient, servers: list[str]
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace, offer_url=OFFER, fallback_url=FALLBACK)
    for base in servers:  # each process has seen the campaign active
        response = await http.get(f"{base}/r/{campaign.slug}")
        assert response.headers["location"].startswith("https://oferta.example.com/")

    async with db.begin() as conn:
        await update_campaign(conn, workspace, campaign.id, now=_now(), status="paused")

    for base in servers:
        await _within_bound(partial(_location_is, http, f"{base}/r/{campaign.slug}", FALLBACK))


async def _domain_verified_in_one_routes_in_all(
    db: AsyncEngine, http: httpx.AsyncClient, servers: list[str]
) -> None:
    workspace = await make_workspace(db)
    domain = await make_domain(db, workspace, HOST)
    campaign = await make_campaign(db, workspace, slug="oferta", host=HOST, offer_url=OFFER)
    async with db.begin() as conn:  # its check failed since: a pending domain routes nothing
        await conn.execute(
            update(domains).where(domains.c.id == domain.id).values(status="pending")
        )
    for base in servers:
        response = await http.get(f"{base}/r/oferta", headers={"host": HOST})
        assert response.status_code == 404

    async with db.begin() as conn:  # what a successful check writes
        await conn.execute(
            update(domains).where(domains.c.id == domain.id).values(status="verified")
        )

    for base in servers:
        url = f"{base}/r/{campaign.slug}"
        await _within_bound(
            partial(_location_is, http, url, "https://oferta.example.com/", host=HOST)
        )


async def _secret_rotated_in_one_is_refused_by_all(
    db: AsyncEngine, http: httpx.AsyncClient, servers: list[str]
) -> None:
    workspace = await make_workspace(db)
    merchant = await make_merchant(db, workspace, preset="generic", key="rede", secret=OLD_SECRET)
    campaign = await make_campaign(db, workspace, offer_url=OFFER)
    click_id = await _click(http, servers[0], campaign.slug)

    async def accepted(base: str, secret: str, txid: str) -> bool:
        response = await http.get(
            f"{base}/postback",
            params={
                "token": workspace.postback_token,
                "merchant": "rede",
                "secret": secret,
                "click_id": click_id,
                "txid": txid,
            },
        )
        return bool(response.json()["status"] == "created")

    for n, base in enumerate(servers):
        assert await accepted(base, OLD_SECRET, f"OLD{n}")

    async with db.begin() as conn:
        await update_merchant(conn, workspace.id, merchant.id, now=_now(), secret=NEW_SECRET)

    for n, base in enumerate(servers):

        async def refused(base: str = base, txid: str = f"STALE{n}") -> bool:
            return not await accepted(base, OLD_SECRET, txid)

        await _within_bound(refused)
        assert await accepted(base, NEW_SECRET, f"NEW{n}")


async def _one_postback_to_all_counts_once(
    db: AsyncEngine,
    http: httpx.AsyncClient,
    servers: list[str],
    settings: Settings,
    receiver: Receiver,
) -> None:
    """The platform retries at once, and each try reaches another process; two workers send
    its deliveries."""
    workspace = await make_workspace(db)
    allowed = settings.model_copy(update={"delivery_allow_private": True})
    for n in range(3):
        spec = Spec(f"Tracker {n}", Kind.POSTBACK, receiver.url(f"/ok?d={n}&c={{conversion_id}}"))
        await make_destination(db, workspace, spec, settings=allowed)
    campaign = await make_campaign(db, workspace, offer_url=OFFER)
    click_id = await _click(http, servers[0], campaign.slug)
    params = {"token": workspace.postback_token, "click_id": click_id, "txid": "T1"}

    answers = await asyncio.gather(
        *(http.get(f"{base}/pb", params=params) for base in servers for _ in range(4))
    )

    statuses = sorted(answer.json()["status"] for answer in answers)
    assert statuses == ["created"] + ["duplicate"] * 7
    [conversion] = await fetch_all(db, conversions, workspace_id=workspace.id)

    async def all_sent() -> bool:
        rows = await fetch_all(db, deliveries, conversion_id=conversion["id"])
        return len(rows) == 3 and all(row["state"] == "sent" for row in rows)

    await _eventually(all_sent, timeout=10)
    sent = [r.query["d"][0] for r in receiver.at("/ok") if r.query["c"] == [conversion["id"]]]
    assert sorted(sent) == ["0", "1", "2"]


async def _orphan_is_attached_once(
    db: AsyncEngine, http: httpx.AsyncClient, servers: list[str]
) -> None:
    """Every process looks for orphans' clicks; one attaches each."""
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace, offer_url=OFFER)
    click_id = await _click(http, servers[1], campaign.slug)
    # The click id arrives before its click is in the database (e.g. clicks imported later).
    async with db.begin() as conn:
        await conn.execute(update(clicks).where(clicks.c.id == click_id).values(id="HIDDEN"))
    params = {"token": workspace.postback_token, "click_id": click_id, "txid": "T1"}
    orphan = await http.get(f"{servers[0]}/pb", params=params)
    assert orphan.json()["status"] == "orphan"
    async with db.begin() as conn:
        await conn.execute(update(clicks).where(clicks.c.id == "HIDDEN").values(id=click_id))

    async def attached() -> bool:
        [conversion] = await fetch_all(db, conversions, workspace_id=workspace.id)
        return bool(conversion["click_id"] == click_id)

    # The processes look every ORPHAN_INTERVAL, the first time that long after they start.
    await _eventually(attached, timeout=ORPHAN_INTERVAL + BOUND)
    [conversion] = await fetch_all(db, conversions, workspace_id=workspace.id)
    assert conversion["campaign_id"] == campaign.id


async def _failed_sign_ins_over_all_count_together(
    db: AsyncEngine, http: httpx.AsyncClient, servers: list[str]
) -> None:
    user = await make_user(db, email="ana@example.com")
    codes = []
    for n in range(5):
        base = servers[n % len(servers)]
        response = await http.post(
            f"{base}/login",
            data={"csrf_token": "t", "email": user.email, "password": "wrong", "next": "/"},
            headers={"cookie": "trilha_csrf=t"},
        )
        codes.append(response.status_code)
    assert codes[3:] == [429, 429]  # TRILHA_LOGIN_LIMIT_PER_ACCOUNT=3, counted across processes
    assert 429 not in codes[:3]


async def _click(http: httpx.AsyncClient, base: str, slug: str) -> str:
    response = await http.get(f"{base}/r/{slug}")
    assert response.status_code == 302
    return response.headers["location"].rsplit("=", 1)[1]


async def _location_is(http: httpx.AsyncClient, url: str, prefix: str, host: str = "") -> bool:
    response = await http.get(url, headers={"host": host} if host else {})
    return response.status_code == 302 and response.headers["location"].startswith(prefix)


async def _within_bound(check: Callable[[], Awaitable[bool]]) -> None:
    await _eventually(check, timeout=BOUND)


async def _eventually(check: Callable[[], Awaitable[bool]], *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < deadline, f"not within {timeout} s"
        await asyncio.sleep(0.05)


def _now() -> datetime:
    return datetime.now(UTC)


@contextmanager
def _trilha_worker(database_url: str, cwd: Path, **settings: str) -> Iterator[None]:
    env = {
        **os.environ,
        "TRILHA_DATABASE_URL": database_url,
        "TRILHA_DELIVERY_ALLOW_PRIVATE": "true",
        "TRILHA_DELIVERY_POLL_INTERVAL": "0.1",
    }
    env.update({f"TRILHA_{name.upper()}": value for name, value in settings.items()})
    process = subprocess.Popen(
        [sys.executable, "-m", "trilha", "worker"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.kill()
        process.wait()


@contextmanager
def _postgres_database() -> Iterator[str]:
    name = f"trilha_test_pooled_{uuid4().hex[:12]}"
    try:
        admin = psycopg.connect("host=127.0.0.1 user=postgres dbname=postgres", autocommit=True)
    except psycopg.OperationalError as exc:
        pytest.fail(
            "the pgbouncer tests need PostgreSQL on 127.0.0.1:5432, user postgres without a "
            f"password, on SQLite runs too (.ci/run starts it): {exc}"
        )
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name
    finally:
        with psycopg.connect(
            "host=127.0.0.1 user=postgres dbname=postgres", autocommit=True
        ) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def _pgbouncer(database: str) -> Iterator[str]:
    """pgbouncer in transaction mode on a free port, in front of ``database``; its URL."""
    # pgbouncer will not run as root: as root, it runs as postgres, which must read its files.
    user = ["-u", "postgres"] if os.geteuid() == 0 else []
    directory = Path(tempfile.mkdtemp(prefix="trilha-pgbouncer-"))
    directory.chmod(0o777)
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not Path(binary).exists():
        pytest.fail("pgbouncer is not installed (scripts/install-test-tools does it as root)")
    port = free_port()
    config = directory / "pgbouncer.ini"
    (directory / "users.txt").write_text('"postgres" ""\n')
    config.write_text(
        f"[databases]\n{database} = host=127.0.0.1 port=5432 dbname={database}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n"
        f"unix_socket_dir =\nauth_type = trust\nauth_file = {directory / 'users.txt'}\n"
        "pool_mode = transaction\ndefault_pool_size = 8\nmax_client_conn = 500\n"
        f"logfile = {directory / 'pgbouncer.log'}\n"
    )
    process = subprocess.Popen(
        [binary, *user, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with psycopg.connect(
                    f"host=127.0.0.1 port={port} user=postgres dbname={database}",
                    prepare_threshold=None,
                ):
                    break
            except psycopg.OperationalError:
                assert process.poll() is None, "pgbouncer exited early"
                assert time.monotonic() < deadline, "pgbouncer did not start"
                time.sleep(0.1)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/{database}"
    finally:
        process.kill()
        process.wait()
        shutil.rmtree(directory, ignore_errors=True)
