"""What an attempt does to its delivery and its destination.

A success resets the destination's count of rejections; ``REJECTIONS_LIMIT`` rejections in a
row (3xx, 4xx other than 408/429, refused addresses) switch it off, as does failing only
temporarily (timeouts, 5xx) for ``TEMPORARY_LIMIT``. Either way the workspace gets a notice.

A circuit breaker: ``UNANSWERED_LIMIT`` requests in a row that get no answer at all (timeouts,
refused connections) pause the destination, 30 s and doubling up to ``LONGEST_PAUSE``; its
deliveries wait. From the first unanswered request until an answer comes, a destination gets
one request at a time (trilha.deliveries.claims). Any answer ends the pause.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import deliveries, delivery_attempts, destinations, notices
from trilha.deliveries.jobs import Job
from trilha.deliveries.kinds import AttemptOutcome, DeliveryState, DestinationStatus
from trilha.deliveries.problems import (
    FAILING,
    HTTP_STATUS,
    HTTP_STATUS_WITH,
    REJECTIONS,
    SWITCHED_OFF,
)
from trilha.deliveries.schedule import next_attempt_at
from trilha.deliveries.send import Sent
from trilha.ids import new_id

REJECTIONS_LIMIT: Final = 10
TEMPORARY_LIMIT: Final = timedelta(days=3)
UNANSWERED_LIMIT: Final = 3
FIRST_PAUSE: Final = timedelta(seconds=30)
LONGEST_PAUSE: Final = timedelta(minutes=10)


def pause_after(unanswered: int) -> timedelta | None:
    """How long a destination waits after ``unanswered`` requests in a row got no answer.

    >>> [str(pause_after(n)) for n in (2, 3, 4, 7, 20)]
    ['None', '0:00:30', '0:01:00', '0:08:00', '0:10:00']
    """
    if unanswered < UNANSWERED_LIMIT:
        return None
    return min(FIRST_PAUSE * (1 << min(unanswered - UNANSWERED_LIMIT, 10)), LONGEST_PAUSE)


async def record_attempt(
    conn: AsyncConnection, job: Job, sent: Sent, *, now: datetime, spread: float
) -> bool:
    """Log the attempt and move the delivery on; False when this worker's lease had run out
    (the attempt is logged all the same: it was made)."""
    await conn.execute(
        insert(delivery_attempts).values(
            id=new_id(),
            delivery_id=job.delivery_id,
            started_at=now,
            request=sent.request,
            status_code=sent.status_code,
            latency_ms=sent.latency_ms,
            response=sent.response,
            error=sent.error,
            outcome=sent.outcome,
        )
    )
    values = delivery_change(job.attempts + 1, sent, now=now, spread=spread)
    held = await conn.execute(
        update(deliveries)
        .where(
            deliveries.c.id == job.delivery_id,
            deliveries.c.lease_until == job.lease_until,
            deliveries.c.state == DeliveryState.PENDING,
        )
        .values(lease_until=None, **values)
    )
    if held.rowcount == 1:
        await apply_to_destination(conn, job.destination.id, sent, now=now)
    return held.rowcount == 1


def delivery_change(attempts: int, sent: Sent, *, now: datetime, spread: float) -> dict[str, Any]:
    """The delivery's columns after its ``attempts``-th attempt came to ``sent``."""
    values: dict[str, Any] = {"attempts": attempts, "last_error": _summary(sent)}
    if sent.outcome is AttemptOutcome.TEMPORARY:
        retry = next_attempt_at(attempts, now, retry_after=sent.retry_after, spread=spread)
        if retry is not None:
            return values | {"next_attempt_at": retry}
        return values | {"state": DeliveryState.FAILED, "finished_at": now}
    state = {
        AttemptOutcome.SUCCESS: DeliveryState.SENT,
        AttemptOutcome.SKIPPED: DeliveryState.SKIPPED,
    }.get(sent.outcome, DeliveryState.FAILED)
    return values | {"state": state, "finished_at": now}


def _summary(sent: Sent) -> str:
    if sent.status_code is not None:
        if sent.error:
            return HTTP_STATUS_WITH.say(code=sent.status_code, detail=sent.error)
        return HTTP_STATUS.say(code=sent.status_code)
    return sent.error


async def apply_to_destination(
    conn: AsyncConnection, destination_id: str, sent: Sent, *, now: datetime
) -> None:
    row = destinations.c
    if sent.status_code is not None:  # an answer, whatever it says: the host is there
        await conn.execute(
            update(destinations)
            .where(row.id == destination_id, row.unanswered != 0)
            .values(unanswered=0, paused_until=None)
        )
    if sent.outcome is AttemptOutcome.SUCCESS:
        await conn.execute(
            update(destinations)
            .where(
                row.id == destination_id,
                (row.consecutive_failures != 0) | row.failing_since.is_not(None),
            )
            .values(consecutive_failures=0, failing_since=None)
        )
    elif sent.outcome in (AttemptOutcome.REJECTED, AttemptOutcome.REFUSED):
        count = await conn.scalar(
            update(destinations)
            .where(row.id == destination_id)
            .values(consecutive_failures=row.consecutive_failures + 1)
            .returning(row.consecutive_failures)
        )
        if count is not None and count >= REJECTIONS_LIMIT:
            reason = REJECTIONS.say(count=count, last=_summary(sent))
            await switch_off(conn, destination_id, reason, now=now)
    elif sent.outcome is AttemptOutcome.TEMPORARY:
        if sent.status_code is None:
            await _unanswered(conn, destination_id, now=now)
        await conn.execute(
            update(destinations)
            .where(row.id == destination_id, row.failing_since.is_(None))
            .values(failing_since=now)
        )
        since = await conn.scalar(select(row.failing_since).where(row.id == destination_id))
        if since is not None and now - since >= TEMPORARY_LIMIT:
            reason = FAILING.say(since=f"{since:%Y-%m-%d %H:%M}")
            await switch_off(conn, destination_id, reason, now=now)


async def _unanswered(conn: AsyncConnection, destination_id: str, *, now: datetime) -> None:
    row = destinations.c
    count = await conn.scalar(
        update(destinations)
        .where(row.id == destination_id)
        .values(unanswered=row.unanswered + 1)
        .returning(row.unanswered)
    )
    pause = pause_after(count or 0)
    if pause is not None:
        await conn.execute(
            update(destinations).where(row.id == destination_id).values(paused_until=now + pause)
        )


async def switch_off(
    conn: AsyncConnection, destination_id: str, reason: str, *, now: datetime
) -> None:
    """Make an active destination inactive, and tell its workspace once."""
    changed = await conn.execute(
        update(destinations)
        .where(
            destinations.c.id == destination_id,
            destinations.c.status == DestinationStatus.ACTIVE,
        )
        .values(status=DestinationStatus.INACTIVE, status_reason=reason, updated_at=now)
        .returning(destinations.c.workspace_id, destinations.c.name)
    )
    switched = changed.first()
    if switched is None:
        return
    await conn.execute(
        insert(notices).values(
            id=new_id(),
            workspace_id=switched.workspace_id,
            destination_id=destination_id,
            message=SWITCHED_OFF.say(name=repr(switched.name), detail=reason),
            created_at=now,
        )
    )


async def purge_attempts(conn: AsyncConnection, *, older_than: datetime, limit: int) -> int:
    """Delete up to ``limit`` attempts started before ``older_than``, the oldest first."""
    a = delivery_attempts.c
    oldest = select(a.id).where(a.started_at < older_than).order_by(a.started_at)
    result = await conn.execute(
        delete(delivery_attempts).where(a.id.in_(oldest.limit(limit).scalar_subquery()))
    )
    return result.rowcount
