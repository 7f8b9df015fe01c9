"""Whether this trilha can do its work: the database answers, its schema is the code's, a
delivery worker has looked at the outbox lately, and the reports' replica, when there is one,
answers at the code's schema too. What /readyz answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.db.migrate import alembic_config
from trilha.deliveries.heartbeat import last_heartbeat

OK = "ok"
NOT_CHECKED = "not checked"


@dataclass(frozen=True, slots=True)
class Readiness:
    """Each check's name and "ok", or what is wrong."""

    database: str
    migrations: str = NOT_CHECKED
    worker: str = NOT_CHECKED
    reports_database: str | None = None  # None: reports read from the database itself

    @property
    def checks(self) -> dict[str, str]:
        checks = {"database": self.database, "migrations": self.migrations, "worker": self.worker}
        if self.reports_database is not None:
            checks["reports_database"] = self.reports_database
        return checks

    @property
    def failing(self) -> list[str]:
        return [name for name, state in self.checks.items() if state != OK]

    @property
    def is_ready(self) -> bool:
        return not self.failing


async def check_readiness(
    engine: AsyncEngine,
    *,
    worker_age: timedelta,
    now: datetime,
    reports_engine: AsyncEngine | None = None,
) -> Readiness:
    replica = None if reports_engine is None else await _reports_database(reports_engine)
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
            migrations = await _migrations(conn)
            worker = await _worker(conn, worker_age, now)
    except (SQLAlchemyError, OSError) as exc:
        return Readiness(database=_unreachable(exc), reports_database=replica)
    return Readiness(database=OK, migrations=migrations, worker=worker, reports_database=replica)


async def _reports_database(engine: AsyncEngine) -> str:
    """ "ok" when the replica answers at the code's schema (a replica still replaying a migration
    is not), else what is wrong."""
    try:
        async with engine.connect() as conn:
            return await _migrations(conn)
    except (SQLAlchemyError, OSError) as exc:
        return _unreachable(exc)


def _unreachable(exc: BaseException) -> str:
    return f"unreachable ({type(exc).__name__})"


async def _migrations(conn: AsyncConnection) -> str:
    if not await conn.run_sync(lambda sync: inspect(sync).has_table("alembic_version")):
        return "not migrated: run `trilha migrate`"
    found = await conn.execute(text("SELECT version_num FROM alembic_version"))
    current = set(found.scalars())
    head = _heads()
    if current != head:
        have = ", ".join(sorted(current)) or "none"
        return f"at {have}, not at head {', '.join(sorted(head))}: run `trilha migrate`"
    return OK


async def _worker(conn: AsyncConnection, worker_age: timedelta, now: datetime) -> str:
    seen = await last_heartbeat(conn)
    if seen is None:
        return "no delivery worker has looked at the outbox yet"
    age = now - seen
    if age > worker_age:
        return f"no delivery worker has looked at the outbox for {int(age.total_seconds())} s"
    return OK


@cache
def _heads() -> set[str]:
    """The revisions the code's migrations end at (read from their files once)."""
    return set(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads())
