"""The delivery worker: claims due deliveries, sends them concurrently, records each attempt.

``trilha serve`` runs one in its process, woken as soon as a postback commits; ``trilha worker``
runs more, on any machine that shares the database. ``stop()`` (SIGTERM in the CLI) stops
claiming and lets the requests in flight finish.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.db.batches import purge_in_batches
from trilha.db.engine import reading
from trilha.db.partitions import (
    ATTEMPTS,
    drop_expired_partitions,
    ensure_partitions,
    validate_references,
)
from trilha.deliveries import tiktok
from trilha.deliveries.build import Endpoints, build_request
from trilha.deliveries.claims import Fairness, any_due, claim_due
from trilha.deliveries.google_ads import (
    access_token_of,
    refusal_of,
    token_request,
    upload_request,
)
from trilha.deliveries.heartbeat import HEARTBEAT_INTERVAL, record_heartbeat
from trilha.deliveries.jobs import Job, Skip
from trilha.deliveries.kinds import AttemptOutcome, Kind
from trilha.deliveries.lifecycle import purge_attempts, record_attempt
from trilha.deliveries.mail import Mailer, email_notices
from trilha.deliveries.problems import NO_ACCESS_TOKEN, OAUTH_FAILED, TIKTOK_REFUSED
from trilha.deliveries.send import Policy, Sent, new_client, send
from trilha.deliveries.verify import verify_destinations
from trilha.metrics import DELIVERY_ATTEMPTS
from trilha.settings import Settings

log = logging.getLogger(__name__)

PURGE_INTERVAL = 3600.0  # seconds


class DeliveryWorker:
    def __init__(self, engine: AsyncEngine, settings: Settings) -> None:
        self._engine = engine
        self._reads = reading(engine)
        self._settings = settings
        self.policy = Policy.from_settings(settings)
        self.endpoints = Endpoints.from_settings(settings)
        self._mailer = Mailer.from_settings(settings)
        self._lease = timedelta(seconds=settings.delivery_lease_seconds)
        self._fairness = Fairness(
            settings.delivery_per_destination, settings.delivery_per_workspace
        )
        # Its own generator: jitter must not move the random module's shared state.
        self._jitter = random.Random()  # noqa: S311 (spreads retries; no secret)
        self._wakeup = asyncio.Event()
        self._stopping = False
        self._finished: list[tuple[Job, Sent, datetime]] = []  # sent, not yet recorded
        self._task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Look for due deliveries now (a conversion just committed)."""
        self._wakeup.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self.run(), name="delivery worker")

    def request_stop(self) -> None:
        """Stop claiming; ``run`` returns once the sends in flight are recorded."""
        self._stopping = True
        self._wakeup.set()

    async def stop(self) -> None:
        self.request_stop()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def run(self) -> None:
        in_flight: set[asyncio.Task[None]] = set()
        last_purge = last_upkeep = last_beat = -PURGE_INTERVAL
        loop = asyncio.get_running_loop()
        async with new_client(self.policy) as client:
            while not self._stopping:
                self._wakeup.clear()
                # Destinations are verified once a poll interval, not on every wake-up.
                if loop.time() - last_upkeep >= self._settings.delivery_poll_interval:
                    last_upkeep = loop.time()
                    if last_upkeep - last_beat >= HEARTBEAT_INTERVAL:
                        last_beat = last_upkeep if await self._beat() else last_beat
                    purge = loop.time() - last_purge >= PURGE_INTERVAL
                    last_purge = loop.time() if purge else last_purge
                    await self._upkeep(purge=purge)
                free = self._settings.delivery_concurrency - len(in_flight)
                jobs = await self._record_and_claim(free)
                for job in jobs:
                    in_flight.add(asyncio.create_task(self.deliver(client, job)))
                if jobs and len(jobs) < free:
                    continue  # more may be due: claim again before waiting
                in_flight = await self._pause(in_flight)
            if in_flight:
                await asyncio.gather(*in_flight, return_exceptions=True)
            await self._record_and_claim(0)

    async def _pause(self, in_flight: set[asyncio.Task[None]]) -> set[asyncio.Task[None]]:
        """Wait for a wake-up, a finished send, or the poll interval."""
        woken = asyncio.create_task(self._wakeup.wait())
        try:
            await asyncio.wait(
                {woken, *in_flight},
                timeout=self._settings.delivery_poll_interval,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            woken.cancel()
        return {task for task in in_flight if not task.done()}

    async def _record_and_claim(self, limit: int) -> list[Job]:
        """Record the attempts finished since the last call and claim up to ``limit`` more, in
        one transaction: one commit for many attempts, where SQLite's single writer would
        otherwise queue a transaction per attempt. Attempts that could not be recorded leave
        their leases to run out, and are made again."""
        finished, self._finished = self._finished, []
        now = datetime.now(UTC)
        try:
            if not finished:
                if limit <= 0:
                    return []
                async with self._reads.connect() as conn:
                    if not await any_due(conn, now=now):
                        return []
            async with self._engine.begin() as conn:
                for job, sent, at in finished:
                    spread = self._jitter.uniform(-1, 1)
                    await record_attempt(conn, job, sent, now=at, spread=spread)
                if limit <= 0:
                    return []
                return await claim_due(
                    conn, now=now, limit=limit, lease=self._lease, fairness=self._fairness
                )
        except (SQLAlchemyError, OSError) as exc:
            log.warning(
                "deliveries: %d attempts not recorded: %s", len(finished), type(exc).__name__
            )
            return []

    async def _beat(self) -> bool:
        """Tell /readyz that a worker is looking at the outbox; whether it could."""
        try:
            async with self._engine.begin() as conn:
                await record_heartbeat(conn, now=datetime.now(UTC))
        except (SQLAlchemyError, OSError) as exc:
            log.warning("delivery heartbeat not recorded: %s", type(exc).__name__)
            return False
        return True

    async def _upkeep(self, *, purge: bool) -> None:
        now = datetime.now(UTC)
        try:
            await verify_destinations(
                self._engine,
                endpoints=self.endpoints,
                allow_private=self._settings.delivery_allow_private,
                now=now,
            )
            if self._mailer is not None:
                await email_notices(self._engine, self._mailer, now=now)
            if purge:
                retention = timedelta(days=self._settings.delivery_attempt_retention_days)

                async def attempts(conn: AsyncConnection, limit: int) -> int:
                    return await purge_attempts(conn, older_than=now - retention, limit=limit)

                await drop_expired_partitions(self._engine, ATTEMPTS, older_than=now - retention)
                await purge_in_batches(self._engine, attempts)
                await self._partitions_ahead(now)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("delivery upkeep failed: %s", type(exc).__name__)

    async def _partitions_ahead(self, now: datetime) -> None:
        """On PostgreSQL, the partitions clicks, delivery attempts and postback log entries will
        need in the coming months (at start, then hourly: a month's is there long before its
        first row)."""
        if self._engine.dialect.name != "postgresql":
            return
        async with self._engine.begin() as conn:
            created = await conn.run_sync(ensure_partitions, now=now)
        if created:
            log.info("created partitions %s", ", ".join(created))
            async with self._engine.begin() as conn:  # if rows moved in from the default
                await conn.run_sync(validate_references)

    async def deliver(self, client: httpx.AsyncClient, job: Job) -> None:
        """Send one claimed delivery; the attempt is recorded with the next claim."""
        try:
            sent = await attempt(client, job, self.endpoints, self.policy)
        except Exception:  # a fault in one delivery must not end the worker: its lease runs out
            log.exception("delivery %s failed", job.delivery_id)
            return
        DELIVERY_ATTEMPTS.labels(sent.outcome, job.destination.kind).inc()
        self._finished.append((job, sent, datetime.now(UTC)))


async def attempt(
    client: httpx.AsyncClient, job: Job, endpoints: Endpoints, policy: Policy
) -> Sent:
    """Build the delivery's request and make it once."""
    now = datetime.now(UTC)
    if job.destination.kind is Kind.GOOGLE_ADS:
        return await upload_to_google(client, job, endpoints, policy, now=now)
    built = build_request(job, endpoints, now)
    if isinstance(built, Skip):
        return Sent(AttemptOutcome.SKIPPED, "", error=built.reason)
    sent = await send(client, built, policy, now=now)
    if job.destination.kind is Kind.TIKTOK_EVENTS and sent.outcome is AttemptOutcome.SUCCESS:
        refusal = tiktok.refusal_of(sent.response)
        if refusal is not None:
            return replace(
                sent, outcome=AttemptOutcome.REJECTED, error=TIKTOK_REFUSED.say(detail=refusal)
            )
    return sent


async def upload_to_google(
    client: httpx.AsyncClient, job: Job, endpoints: Endpoints, policy: Policy, *, now: datetime
) -> Sent:
    """The OAuth refresh, then the upload; a refusal inside a 200 answer is a rejection."""
    built = upload_request(job, ads_url=endpoints.google_ads_url, access_token="", now=now)
    if isinstance(built, Skip):
        return Sent(AttemptOutcome.SKIPPED, "", error=built.reason)
    refreshed = await send(
        client, token_request(job, oauth_url=endpoints.google_oauth_url), policy, now=now
    )
    token = (
        access_token_of(refreshed.response) if refreshed.outcome is AttemptOutcome.SUCCESS else None
    )
    if token is None:
        error = refreshed.error or NO_ACCESS_TOKEN.say()
        return replace(refreshed, error=OAUTH_FAILED.say(detail=error)[:500])
    built = upload_request(job, ads_url=endpoints.google_ads_url, access_token=token, now=now)
    if isinstance(built, Skip):
        return Sent(AttemptOutcome.SKIPPED, "", error=built.reason)
    sent = await send(client, built, policy, now=now)
    refusal = refusal_of(sent.response) if sent.outcome is AttemptOutcome.SUCCESS else None
    if refusal is not None:
        return replace(sent, outcome=AttemptOutcome.REJECTED, error=f"Google refused it: {refusal}")
    return sent
