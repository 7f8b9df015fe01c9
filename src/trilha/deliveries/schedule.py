"""When a delivery that failed for a temporary reason is tried again: data plus a pure function."""

from __future__ import annotations

from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Final

# The wait after each failed attempt: ten tries over ≈ 2 days 21 hours after the first.
RETRY_SCHEDULE: Final = (
    timedelta(seconds=10),
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=6),
    timedelta(hours=12),
    timedelta(hours=24),
    timedelta(hours=24),
)
MAX_ATTEMPTS: Final = len(RETRY_SCHEDULE) + 1
JITTER: Final = 0.2  # each wait is spread by up to ±20 %, so retries of a burst do not bunch
# A Retry-After answer is honoured within these bounds (a server asking for a week gets an hour).
RETRY_AFTER_MIN: Final = timedelta(seconds=1)
RETRY_AFTER_MAX: Final = timedelta(hours=1)


def next_attempt_at(
    attempts: int, now: datetime, *, retry_after: timedelta | None = None, spread: float = 0.0
) -> datetime | None:
    """When to try again after ``attempts`` tries; None once the schedule is spent.

    ``spread`` in [-1, 1] (random in the worker) moves the wait by up to ``JITTER`` of it; a
    ``retry_after`` the server asked for replaces the schedule's wait, within bounds.

    >>> from datetime import UTC
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> next_attempt_at(1, t).isoformat()
    '2026-01-01T00:00:10+00:00'
    >>> next_attempt_at(1, t, retry_after=timedelta(days=7)).isoformat()
    '2026-01-01T01:00:00+00:00'
    >>> next_attempt_at(MAX_ATTEMPTS, t) is None
    True
    """
    if attempts >= MAX_ATTEMPTS:
        return None
    if retry_after is not None:
        return now + min(max(retry_after, RETRY_AFTER_MIN), RETRY_AFTER_MAX)
    wait = RETRY_SCHEDULE[max(attempts, 1) - 1]
    return now + wait * (1 + JITTER * max(-1.0, min(1.0, spread)))


def parse_retry_after(value: str | None, now: datetime) -> timedelta | None:
    """A Retry-After header's wait: seconds, or an HTTP date; None when absent or unreadable.

    >>> from datetime import UTC
    >>> parse_retry_after("120", datetime(2026, 1, 1, tzinfo=UTC))
    datetime.timedelta(seconds=120)
    >>> parse_retry_after("Thu, 01 Jan 2026 00:00:30 GMT", datetime(2026, 1, 1, tzinfo=UTC))
    datetime.timedelta(seconds=30)
    >>> parse_retry_after("soon", datetime(2026, 1, 1, tzinfo=UTC)) is None
    True
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return timedelta(seconds=min(int(value[:9]), 10**8))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when - now, timedelta(0))
