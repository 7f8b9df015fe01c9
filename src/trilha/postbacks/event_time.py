"""When a platform says its event happened, read from the text it sends (pure).

Platforms write times four ways: milliseconds or seconds since the epoch (Hotmart's
`creation_date`), ISO 8601 with an offset (Eduzz's `sentDate`), and São Paulo's wall clock with
no offset (`2026-12-06 14:05:09`, or `06/12/2026 14:05`). A time that cannot be read, or lies
outside 2000-2100, is no time: the postback is still recorded, without one.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

BRAZIL = ZoneInfo("America/Sao_Paulo")  # the zone Brazilian platforms write local times in
EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2100, 1, 1, tzinfo=UTC)
_EPOCH = re.compile(r"\d{9,13}")  # seconds (9-10 digits) or milliseconds (12-13)
_DAY_FIRST = re.compile(
    r"(?P<d>\d{1,2})/(?P<m>\d{1,2})/(?P<y>\d{4})"
    r"(?:[ T](?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?)?"
)


def read_event_time(text: str | None) -> datetime | None:
    """The instant ``text`` names, in UTC, or None.

    >>> read_event_time("1765029909000").isoformat()
    '2025-12-06T14:05:09+00:00'
    >>> read_event_time("2026-12-06 14:05:09").isoformat()  # São Paulo's clock, UTC-3
    '2026-12-06T17:05:09+00:00'
    >>> read_event_time("2026-12-06T14:05:09.123-03:00").isoformat()
    '2026-12-06T17:05:09.123000+00:00'
    >>> read_event_time("06/12/2026 14:05").isoformat()
    '2026-12-06T17:05:00+00:00'
    >>> read_event_time("yesterday") is None, read_event_time("9999999999999") is None
    (True, True)
    """
    if not text:
        return None
    text = text.strip()
    at = _epoch(text) if _EPOCH.fullmatch(text) else _written(text)
    return at if at is not None and EARLIEST <= at < LATEST else None


def _epoch(digits: str) -> datetime | None:
    number = int(digits)
    seconds = number / 1000 if len(digits) >= 12 else number
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _written(text: str) -> datetime | None:
    day_first = _DAY_FIRST.fullmatch(text)
    try:
        if day_first:
            parts = {k: int(v or 0) for k, v in day_first.groupdict().items()}
            at = datetime(parts["y"], parts["m"], parts["d"], parts["H"], parts["M"], parts["S"])  # noqa: DTZ001
        else:
            at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=BRAZIL)
    return at.astimezone(UTC)
