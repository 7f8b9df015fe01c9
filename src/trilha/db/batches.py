"""Old rows go a small batch per transaction, so that a click or a postback arriving meanwhile
waits for one batch at most, never for the whole purge."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

PURGE_BATCH = 1000  # rows a transaction
PAUSE = 0.05  # seconds between batches, for the writers waiting on the lock


async def purge_in_batches(
    engine: AsyncEngine, purge: Callable[[AsyncConnection, int], Awaitable[int]]
) -> int:
    """Run ``purge(conn, limit)`` in a transaction of its own until it purges fewer than
    ``limit`` rows; how many it purged in all."""
    purged = 0
    while True:
        async with engine.begin() as conn:
            batch = await purge(conn, PURGE_BATCH)
        purged += batch
        if batch < PURGE_BATCH:
            return purged
        await asyncio.sleep(PAUSE)
