"""Background upkeep of a serving process: attach orphans whose click appeared, trim the log and
the counts of sign-in attempts."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.conversions import attach_orphans
from trilha.login_limits import purge_attempts
from trilha.postbacks.log import purge_log

log = logging.getLogger(__name__)

ORPHAN_INTERVAL = 10.0  # seconds
PURGE_EVERY = 360  # orphan rounds: once an hour


async def run_maintenance(engine: AsyncEngine, *, retention: timedelta) -> None:
    rounds = 0
    while True:
        await asyncio.sleep(ORPHAN_INTERVAL)
        try:
            async with engine.begin() as conn:
                attached = await attach_orphans(conn, now=datetime.now(UTC))
                if rounds % PURGE_EVERY == 0:
                    await purge_log(conn, older_than=datetime.now(UTC) - retention)
                    await purge_attempts(conn, now=datetime.now(UTC))
        except (SQLAlchemyError, OSError) as exc:
            log.warning("maintenance round failed: %s", type(exc).__name__)
            continue
        if attached:
            log.info("attached %d orphan conversions to their clicks", attached)
        rounds += 1
