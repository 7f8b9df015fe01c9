"""Raw clicks older than ``TRILHA_CLICK_RETENTION_DAYS`` go, a small batch per transaction; the
rollups keep counting them, and a click a conversion points to stays for its reports.

On PostgreSQL a month past retention goes whole: its partition is dropped, its converted clicks
kept (trilha.db.partitions); the batches delete the rest, in the month still partly kept."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time, timedelta

from sqlalchemy import Connection, delete, exists, select
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.db.batches import PAUSE, PURGE_BATCH
from trilha.db.partitions import CLICKS, drop_expired_partitions
from trilha.db.schema import clicks, conversions
from trilha.ids import click_ids_from


def all_kept_since(now: datetime, days: int) -> datetime | None:
    """The first UTC midnight from which every click is still kept (None: every click is).

    >>> all_kept_since(datetime(2026, 12, 6, 15, 30, tzinfo=UTC), 30)
    datetime.datetime(2026, 11, 7, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if not days:
        return None
    return datetime.combine((now - timedelta(days=days)).date(), time(), UTC) + timedelta(days=1)


def purge_clicks(
    conn: Connection, *, older_than: datetime, after: str = "", limit: int = PURGE_BATCH
) -> tuple[int, str | None]:
    """Delete up to ``limit`` clicks made before ``older_than`` that no conversion points to,
    the first by id past ``after``; how many went, and the id to go on after (None: no more)."""
    c = clicks.c
    doomed = list(
        conn.execute(
            select(c.id)
            # Ids sort by time: the primary key finds the old clicks without reading the others,
            # and going on after the last id skips the converted clicks already passed.
            .where(c.id > after, c.id < click_ids_from(older_than), c.created_at < older_than)
            .where(~exists().where(conversions.c.click_id == c.id))
            .order_by(c.id)
            .limit(limit)
        ).scalars()
    )
    if not doomed:
        return 0, None
    conn.execute(delete(clicks).where(c.id.in_(doomed)))
    return len(doomed), doomed[-1] if len(doomed) == limit else None


async def purge_old_clicks(engine: AsyncEngine, *, older_than: datetime) -> int:
    """Drop the months past retention, then purge batch after batch, each in a transaction of
    its own, until none is left; how many clicks the batches purged."""
    await drop_expired_partitions(engine, CLICKS, older_than=older_than)
    purged, after = 0, ""
    while True:
        async with engine.begin() as conn:
            batch, last = await conn.run_sync(purge_clicks, older_than=older_than, after=after)
        purged += batch
        if last is None:
            return purged
        after = last
        await asyncio.sleep(PAUSE)
