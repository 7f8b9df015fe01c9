"""Whether this trilha can do its work: the database answers, its schema is the code's, and a
delivery worker has looked at the outbox lately. What /readyz answers."""

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

    @property
    def checks(self) -> dict[str, str]:
        return {"database": self.database, "migrations": self.migrations, "worker": self.worker}

    @property
    def failing(self) -> list[str]:
        return [name for name, state in self.checks.items() if state != OK]

    @property
    def is_ready(self) -> bool:
        return not self.failing


async def check_readiness(
    engine: AsyncEngine, *, worker_age: timedelta, now: datetime
) -> Readiness:
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
            migrations = await _migrations(conn)
            worker = await _worker(conn, worker_age, now)
    except (SQLAlchemyError, OSError) as exc:
        return Readiness(database=f"unreachable ({type(exc).__name__})")
    return Readiness(database=OK, migrations=migrations, worker=worker)


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
