"""Background upkeep of a serving process: attach orphans whose click appeared, trim the log,
the counts of unmatched postbacks and of sign-in attempts, look again at custom domains' DNS
records, empty old postback payloads, delete raw clicks past their retention and the user agents
no click holds any more."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.agent_retention import purge_unused_agents
from trilha.click_retention import purge_old_clicks
from trilha.conversions.orphans import attach_orphans
from trilha.custom_domains import DomainPolicy, recheck_domains
from trilha.db.batches import purge_in_batches
from trilha.db.partitions import POSTBACK_LOG, drop_expired_partitions
from trilha.login_limits import purge_attempts
from trilha.postbacks.log import purge_log
from trilha.postbacks.unmatched import MAX_SOURCES, count_unmatched, purge_unmatched
from trilha.privacy.buyers import purge_payloads
from trilha.settings import Settings

log = logging.getLogger(__name__)

ORPHAN_INTERVAL = 10.0  # seconds
PURGE_EVERY = 360  # orphan rounds: once an hour


async def run_maintenance(engine: AsyncEngine, settings: Settings) -> None:
    unmatched_retention = timedelta(hours=settings.unmatched_retention_hours)
    domains = DomainPolicy.from_settings(settings)
    rounds = 0
    while True:
        await asyncio.sleep(ORPHAN_INTERVAL)
        if rounds % PURGE_EVERY == 0:
            await _recheck_domains(engine, domains)
            await purge_old_rows(engine, settings)
        try:
            async with engine.begin() as conn:
                attached = await conn.run_sync(attach_orphans, now=datetime.now(UTC))
                if rounds % PURGE_EVERY == 0:
                    await report_unmatched(conn, retention=unmatched_retention)
                    await purge_attempts(conn, now=datetime.now(UTC))
        except (SQLAlchemyError, OSError) as exc:
            log.warning("maintenance round failed: %s", type(exc).__name__)
            continue
        if attached:
            log.info("attached %d orphan conversions to their clicks", attached)
        rounds += 1


async def report_unmatched(conn: AsyncConnection, *, retention: timedelta) -> None:
    """Trim the counts of postbacks that matched no workspace; log the last hour's, if any."""
    now = datetime.now(UTC)
    await purge_unmatched(conn, older_than=now - retention)
    sources = await count_unmatched(conn, since=now - timedelta(hours=1), limit=MAX_SOURCES)
    if not sources:
        return
    top = ", ".join(f"{s.source} ({s.requests})" for s in sources[:3])
    log.warning(
        "%d postbacks matched no workspace in the last hour (sources: %d; most: %s); "
        "see `trilha postbacks unmatched`",
        sum(s.requests for s in sources),
        len(sources),
        top,
    )


async def purge_old_rows(engine: AsyncEngine, settings: Settings) -> None:
    """The postback log's entries and payloads, and raw clicks, past their retention: each a
    batch per transaction, so that clicks and postbacks wait for one batch at most. On
    PostgreSQL the log's months past retention go whole first, a month per transaction
    (trilha.db.partitions); the batches delete the rest, in the month still partly kept."""
    now = datetime.now(UTC)
    log_before = now - timedelta(days=settings.postback_log_retention_days)
    payload_before = now - timedelta(days=settings.postback_payload_retention_days)

    async def entries(conn: AsyncConnection, limit: int) -> int:
        return await purge_log(conn, older_than=log_before, limit=limit)

    async def payloads(conn: AsyncConnection, limit: int) -> int:
        return await conn.run_sync(purge_payloads, older_than=payload_before, now=now, limit=limit)

    try:
        await drop_expired_partitions(engine, POSTBACK_LOG, older_than=log_before)
        await purge_in_batches(engine, entries)
        await purge_in_batches(engine, payloads)
        await purge_expired_clicks(engine, days=settings.click_retention_days)
    except (SQLAlchemyError, OSError) as exc:
        log.warning("retention purge failed: %s", type(exc).__name__)


async def purge_expired_clicks(engine: AsyncEngine, *, days: int) -> None:
    """Raw clicks older than ``days`` (none if 0) go, a batch per transaction, then the user
    agents no click holds any more."""
    if not days:
        return
    purged = await purge_old_clicks(engine, older_than=datetime.now(UTC) - timedelta(days=days))
    if purged:
        log.info("purged %d clicks older than %d days", purged, days)
    agents = await purge_unused_agents(engine)
    if agents:
        log.info("purged %d user agents no click holds any more", agents)


async def _recheck_domains(engine: AsyncEngine, policy: DomainPolicy) -> None:
    """Custom domains not checked for a day are looked at again (DNS outside any transaction)."""
    try:
        await recheck_domains(engine, policy=policy, now=datetime.now(UTC))
    except (SQLAlchemyError, OSError) as exc:
        log.warning("custom domain re-check failed: %s", type(exc).__name__)
