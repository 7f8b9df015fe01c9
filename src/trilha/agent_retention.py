"""User agents no click holds any more go after the clicks past retention, without holding up
the clicks coming in.

Finding them reads every click (no index leads from an agent to its clicks), outside any write
lock: :func:`unused_agents`. Clicks stored meanwhile may hold some of them, so each goes only if
no click made since a little before that read holds it (:func:`delete_unused_agents`), which
reads the recent clicks alone: their ids begin with their time. A click batch that found its
agent stored, and so stored none, commits before the agent can go: on SQLite the deleting
transaction holds the one write lock; on PostgreSQL it locks ``user_agents`` against the INSERT
each click batch begins with, so that the batches in flight commit first and the next ones wait
for it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Final

from sqlalchemy import Connection, delete, select
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.db.batches import PAUSE, PURGE_BATCH
from trilha.db.engine import reading
from trilha.db.partitions import LOCK_TIMEOUT
from trilha.db.schema import clicks, user_agents
from trilha.ids import click_ids_from

# A click is committed within seconds of the time its id begins with; ten minutes also allow
# for a writer held up and for the clocks of several machines apart.
IN_FLIGHT: Final = timedelta(minutes=10)


def unused_agents(conn: Connection) -> list[int]:
    """The keys of the user agents no click holds: a read of every click."""
    # EXCEPT keeps one entry for each distinct key, whatever the number of clicks.
    query = select(user_agents.c.key).except_(select(clicks.c.user_agent_key))
    return list(conn.execute(query).scalars())


def delete_unused_agents(conn: Connection, keys: Sequence[int], *, read_at: datetime) -> int:
    """Delete the agents of ``keys``, found unused by a read begun at ``read_at``, that no click
    made since then holds; how many went."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        # Conflicts with the ROW EXCLUSIVE lock of a click batch's INSERT (reads go on), and
        # with itself, so that two processes pruning at once take turns.
        conn.exec_driver_sql("LOCK TABLE user_agents IN SHARE ROW EXCLUSIVE MODE")
    recent = select(clicks.c.user_agent_key).where(
        clicks.c.id >= click_ids_from(read_at - IN_FLIGHT)
    )
    held = set(conn.execute(recent).scalars())
    doomed = [key for key in keys if key not in held]
    if not doomed:
        return 0
    return conn.execute(delete(user_agents).where(user_agents.c.key.in_(doomed))).rowcount


async def purge_unused_agents(engine: AsyncEngine) -> int:
    """Find the unused agents, then delete them a batch per transaction; how many went."""
    read_at = datetime.now(UTC)
    async with reading(engine).connect() as conn:
        keys = await conn.run_sync(unused_agents)
    purged = 0
    for first in range(0, len(keys), PURGE_BATCH):
        if first:
            await asyncio.sleep(PAUSE)
        async with engine.begin() as conn:
            batch = keys[first : first + PURGE_BATCH]
            purged += await conn.run_sync(delete_unused_agents, batch, read_at=read_at)
    return purged
