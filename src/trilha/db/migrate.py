"""Apply Alembic migrations: on `trilha migrate`, when `trilha serve` or `trilha worker` starts,
and before a command-line task. One process migrates at a time, under a lock; the others wait,
then find the schema current."""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import structlog
from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.engine import URL, make_url

from trilha.db.engine import Pooler, postgres_connect_args, sync_url
from trilha.errors import MigrationLocked

MIGRATIONS = Path(__file__).parent / "migrations"

# b"trilhamg" read as a big-endian integer: a key no other application on the server is likely
# to choose for its own advisory locks.
MIGRATION_LOCK_KEY: Final = 0x7472_696C_6861_6D67
# Longer than a migration of a large database takes (0007 took 5 minutes on 5,000,000 clicks on
# SQLite: docs/performance.md); past it, a supervisor restarts the process, which waits again.
LOCK_WAIT: Final = 900.0  # seconds
LOCK_POLL: Final = 0.2  # seconds between tries

LOG: Final = structlog.stdlib.get_logger("trilha.migrate")


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = sync_url(url)
    return config


def migrate(
    url: str, revision: str = "head", *, lock_wait: float = LOCK_WAIT, pooler: Pooler = "none"
) -> None:
    """Upgrade the database at ``url`` to ``revision``, creating the SQLite file if needed.

    Alembic reads the version table only once this process holds the migration lock, so a
    process that waited for another's migration finds nothing left to do. MigrationLocked
    after ``lock_wait`` seconds of waiting. Through a ``pooler`` in transaction mode a session
    outlives no transaction, so the lock is the migration transaction's own."""
    config = alembic_config(url)
    sync = make_url(config.attributes["url"])
    postgres = sync.get_backend_name() == "postgresql"
    engine = create_engine(
        sync, hide_parameters=True, connect_args=postgres_connect_args(pooler) if postgres else {}
    )
    try:
        with engine.connect() as conn:
            config.attributes["connection"] = conn
            if pooler == "transaction" and postgres:
                _begin_holding_lock(conn, wait=lock_wait)
                command.upgrade(config, revision)
                conn.commit()  # and so lets go of the lock
            else:
                with migration_lock(conn, wait=lock_wait), conn.begin():
                    command.upgrade(config, revision)
    finally:
        engine.dispose()


@contextmanager
def migration_lock(conn: Connection, *, wait: float) -> Iterator[None]:
    """Hold the database's migration lock: PostgreSQL's advisory lock on ``conn``, or a file
    lock beside a SQLite file (none for an in-memory database, which no other process sees)."""
    if conn.dialect.name == "postgresql":
        with _advisory_lock(conn, wait=wait):
            yield
    elif (path := lock_file_path(conn.engine.url)) is not None:
        with _file_lock(path, wait=wait):
            yield
    else:
        yield


def lock_file_path(url: URL) -> Path | None:
    """The lock file beside a SQLite database's file.

    >>> lock_file_path(URL.create("sqlite", database="/srv/trilha/trilha.db"))
    PosixPath('/srv/trilha/trilha.db.migrate-lock')
    """
    if url.database in (None, "", ":memory:") or url.query.get("mode") == "memory":
        return None
    return Path(f"{url.database}.migrate-lock")


@contextmanager
def _advisory_lock(conn: Connection, *, wait: float) -> Iterator[None]:
    """A session-level advisory lock: it outlives the migration's transaction, and goes with
    the session if the process dies."""

    def take() -> bool:
        taken = conn.execute(
            text("SELECT pg_try_advisory_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
        ).scalar_one()
        conn.commit()  # wait outside any transaction
        return bool(taken)

    _wait_for(take, lambda: _advisory_lock_holder(conn), wait=wait)
    try:
        yield
    finally:
        conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK_KEY})
        conn.commit()


def _begin_holding_lock(conn: Connection, *, wait: float) -> None:
    """Begin a transaction holding the migration lock until it ends (through a pooler in
    transaction mode, the one server session trilha is sure to keep is its transaction's)."""

    def take() -> bool:
        conn.begin()
        taken = conn.execute(
            text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
        ).scalar_one()
        if not taken:
            conn.rollback()  # wait outside any transaction
        return bool(taken)

    _wait_for(take, lambda: _advisory_lock_holder(conn), wait=wait)


def _advisory_lock_holder(conn: Connection) -> str:
    # A bigint key is held as classid (its high 32 bits), objid (its low 32 bits), objsubid 1.
    holder = conn.execute(
        text(
            "SELECT a.pid, a.client_addr, a.application_name FROM pg_locks l"
            " JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
            " AND l.classid::bigint = :high AND l.objid::bigint = :low"
            " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ),
        {"high": MIGRATION_LOCK_KEY >> 32, "low": MIGRATION_LOCK_KEY & 0xFFFF_FFFF},
    ).first()
    conn.commit()
    if holder is None:
        return "a PostgreSQL session that has since let go"
    source = holder.client_addr or "a local socket"
    name = f", {holder.application_name}" if holder.application_name else ""
    return f"PostgreSQL backend {holder.pid}, connected from {source}{name}"


@contextmanager
def _file_lock(path: Path, *, wait: float) -> Iterator[None]:
    """An exclusive flock on ``path``, which names the process holding it; the lock goes with
    the process if it dies. The file stays: removing it would let two processes lock two files."""
    with path.open("a+") as file:

        def take() -> bool:
            try:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        def holder() -> str:
            return f"process {path.read_text().strip() or '(unknown)'}"

        _wait_for(take, holder, wait=wait)
        file.truncate(0)
        file.write(f"{os.getpid()} on {socket.gethostname()}\n")
        file.flush()
        try:
            yield
        finally:
            fcntl.flock(file, fcntl.LOCK_UN)


def _wait_for(take: Callable[[], bool], holder: Callable[[], str], *, wait: float) -> None:
    """Call ``take`` until it gets the lock; MigrationLocked after ``wait`` seconds."""
    if take():
        return
    LOG.info("another process is migrating the database; waiting", holder=holder())
    deadline = time.monotonic() + wait
    while not take():
        if time.monotonic() >= deadline:
            raise MigrationLocked(
                f"gave up after waiting {wait:g} s for the database's migration lock, held by "
                f"{holder()}; is a migration still running there?"
            )
        time.sleep(LOCK_POLL)
