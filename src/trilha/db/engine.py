"""make_engine(url): an async engine with SQLite's pragmas or a PostgreSQL pool."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from typing import Any, Literal
from weakref import WeakKeyDictionary

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

SQLITE_BUSY_TIMEOUT_MS = 5000
# While another connection builds a WAL file's index (the first to open the file) or cleans it
# up (the last to close it), SQLite answers "database is locked" at once, without the busy
# timeout: https://sqlite.org/wal.html#sometimes_queries_return_sqlite_busy_in_wal_mode
WAL_OPEN_SECONDS = 1.0  # tried again for a second in all, 10 ms apart
WAL_OPEN_PAUSE = 0.01
WAL_REFUSED_AT_ONCE = 0.1  # a refusal quicker than this came without the busy timeout's wait
# What PRAGMA wal_checkpoint answers when SQLite refused to begin it: another connection holds
# the checkpoint lock (it checkpoints), and SQLite does not wait for it with the busy timeout.
CHECKPOINT_REFUSED = (1, -1, -1)
# Execution option of an engine whose transactions only read (see reading()).
READS_ONLY = "trilha_reads_only"

# The synchronous mode each SQLite engine was made with, for its blocking twin.
_sqlite_synchronous: WeakKeyDictionary[Engine, str] = WeakKeyDictionary()
# The driver's connect arguments each PostgreSQL engine was made with, for its blocking twin.
_connect_args: WeakKeyDictionary[Engine, dict[str, Any]] = WeakKeyDictionary()

# What TRILHA_DATABASE_POOLER may say sits between trilha and PostgreSQL.
Pooler = Literal["none", "transaction"]


def async_url(url: str) -> str:
    """Pick the async driver for a URL given with the bare dialect name.

    >>> async_url("postgresql://postgres@127.0.0.1/test")
    'postgresql+psycopg://postgres@127.0.0.1/test'
    """
    parsed = make_url(url)
    if parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        parsed = parsed.set(drivername="sqlite+aiosqlite")
    elif parsed.drivername in ("postgresql", "postgres", "postgresql+psycopg2"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def sync_url(url: str) -> str:
    """The same database through a blocking driver, for Alembic.

    >>> sync_url("sqlite+aiosqlite:///./trilha.db")
    'sqlite:///./trilha.db'
    """
    parsed = make_url(async_url(url))
    if parsed.drivername == "sqlite+aiosqlite":
        parsed = parsed.set(drivername="sqlite")
    return parsed.render_as_string(hide_password=False)


def is_sqlite(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "sqlite"


def postgres_connect_args(pooler: Pooler) -> dict[str, Any]:
    """psycopg's arguments for a connection that may go through ``pooler``. In transaction mode
    (pgbouncer's pool_mode=transaction) consecutive transactions may run on different server
    connections, so a statement psycopg prepared on one is unknown to the next: prepare none.

    >>> postgres_connect_args("transaction")
    {'prepare_threshold': None}
    """
    return {"prepare_threshold": None} if pooler == "transaction" else {}


def make_engine(
    url: str,
    *,
    sqlite_synchronous: str = "FULL",
    pooler: Pooler = "none",
    pool_size: int = 10,
    max_overflow: int = 10,
) -> AsyncEngine:
    """An engine for ``url``. ``pool_size`` and ``max_overflow`` size a PostgreSQL pool; SQLite's
    stays at 4 and 4, enough for one writer and the readers WAL lets run beside it."""
    url = async_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_async_engine(url, pool_size=4, max_overflow=4, hide_parameters=True)
        _configure_sqlite(engine.sync_engine, sqlite_synchronous)
        _sqlite_synchronous[engine.sync_engine] = sqlite_synchronous
        return engine
    connect_args = postgres_connect_args(pooler)
    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=max_overflow,
        pool_pre_ping=True,
        hide_parameters=True,
        connect_args=connect_args,
    )
    _connect_args[engine.sync_engine] = connect_args
    return engine


def reading(engine: AsyncEngine) -> AsyncEngine:
    """The same engine and pool for transactions that only read: on SQLite they begin deferred,
    so they never take (nor wait for) the write lock; WAL lets them read while another writes."""
    return engine.execution_options(**{READS_ONLY: True})


async def answers(engine: AsyncEngine) -> bool:
    """Whether the database answers a query."""
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
    except (SQLAlchemyError, OSError):
        return False
    return True


async def truncate_wal(engine: AsyncEngine) -> bool:
    """On SQLite, copy the whole WAL into the database file and truncate it to nothing, so that
    no earlier version of a page survives there; whether it could (readers still on an older
    snapshot make it wait up to the busy timeout, then give up). True on PostgreSQL.

    While another connection checkpoints (the app's own background checkpoint, say), SQLite
    refuses a checkpoint at once, without the busy timeout's wait: it is tried again, 10 ms
    apart, for up to the busy timeout, rather than leaving the WAL and the database file with
    what the caller just erased."""
    if not is_sqlite(engine):
        return True
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
    async with engine.connect() as conn:
        raw = await conn.get_raw_connection()
        while True:
            cursor = await raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # type: ignore[union-attr]
            row = await cursor.fetchone()
            await cursor.close()
            # (busy, WAL frames, frames checkpointed); frames of -1 with busy: refused before
            # it began, as while another checkpoint runs.
            if row is None or tuple(row) != CHECKPOINT_REFUSED or time.monotonic() > deadline:
                break
            await asyncio.sleep(WAL_OPEN_PAUSE)
    return row is not None and row[0] == 0


def blocking_engine(engine: AsyncEngine) -> Engine:
    """A blocking engine with one connection to the same database (for SQLite, the same file
    with the same pragmas).

    The writer runs each whole batch on it in a thread of its own: one hand-over between threads
    per batch, where aiosqlite takes three or four per statement and SQLAlchemy's async layer
    switches greenlets around every statement.
    """
    url = sync_url(engine.url.render_as_string(hide_password=False))
    if not is_sqlite(engine):
        return create_engine(
            url,
            pool_size=1,
            max_overflow=0,
            pool_pre_ping=True,
            hide_parameters=True,
            connect_args=_connect_args.get(engine.sync_engine, {}),
        )
    twin = create_engine(url, pool_size=1, max_overflow=0, hide_parameters=True)
    _configure_sqlite(twin, _sqlite_synchronous.get(engine.sync_engine, "FULL"))
    return twin


def _null(value: None) -> None:
    return value


# sqlite3 binds a value of any type but int, float, str and bytearray through its adapters: for
# None that was two failing attribute lookups, each formatting an AttributeError, for every NULL
# of every row (a postback binds nine). Registered, it is one lookup in the adapters' table.
sqlite3.register_adapter(type(None), _null)


def _open_wal(cursor: Any) -> None:
    """PRAGMA journal_mode=WAL, the connection's first look at the file, tried again while
    another connection holds the WAL index to build or clean it up: SQLite then refuses at
    once. A refusal that came only after the busy timeout is a lock held for longer (another
    process's exclusive lock, say), told as it is rather than waited for again and again."""
    deadline = time.monotonic() + WAL_OPEN_SECONDS
    while True:
        started = time.monotonic()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            now = time.monotonic()
            if "locked" not in str(exc) or now - started > WAL_REFUSED_AT_ONCE or now > deadline:
                raise
            time.sleep(WAL_OPEN_PAUSE)


def _configure_sqlite(engine: Engine, synchronous: str) -> None:
    if synchronous not in ("FULL", "NORMAL"):
        raise ValueError(f"unknown synchronous mode {synchronous!r}")

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" below issue BEGIN instead of the driver's own deferred BEGIN.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        _open_wal(cursor)
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        # Erased rows are overwritten with zeros, not only unlinked: "forget this buyer" leaves
        # no byte of them in free space. Some builds have it compiled in; this one may not.
        cursor.execute("PRAGMA secure_delete=ON")
        # trilha.click_writer checkpoints in the background, off the commit path.
        cursor.execute("PRAGMA wal_autocheckpoint=0")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Writers take the write lock up front: a deferred transaction that later writes can
        # fail with SQLITE_BUSY without waiting for the busy timeout. Readers never need it.
        reads_only = conn.get_execution_options().get(READS_ONLY, False)
        conn.exec_driver_sql("BEGIN" if reads_only else "BEGIN IMMEDIATE")
