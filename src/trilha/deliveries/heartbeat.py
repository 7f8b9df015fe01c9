"""The delivery workers' heartbeat: when one of them last looked at the outbox.

Any worker, in any process or machine sharing the database, writes the time into the
``instance`` table; /readyz reads it to tell whether deliveries are being sent at all. It is
written at most once every ``HEARTBEAT_INTERVAL``, so that on SQLite it costs the one write lock
a short transaction every few seconds, not one per poll.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import instance

HEARTBEAT_KEY = "delivery_worker_seen_at"
HEARTBEAT_INTERVAL = 10.0  # seconds; well under TRILHA_READY_WORKER_AGE's smallest value


async def record_heartbeat(conn: AsyncConnection, *, now: datetime) -> None:
    """Note that a worker looked at the outbox at ``now``."""
    row = {"key": HEARTBEAT_KEY, "value": now.isoformat()}
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement: Insert = (
        dialect.insert(instance)
        .values(row)
        .on_conflict_do_update(index_elements=[instance.c.key], set_={"value": row["value"]})
    )
    await conn.execute(statement)


async def last_heartbeat(conn: AsyncConnection) -> datetime | None:
    """When a worker last looked at the outbox; None when none ever has."""
    value = (
        await conn.execute(select(instance.c.value).where(instance.c.key == HEARTBEAT_KEY))
    ).scalar_one_or_none()
    return datetime.fromisoformat(value) if value else None
