"""Date ranges of reports: presets and custom dates, in a time zone, as UTC instants (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo

from trilha.errors import InvalidInput

MAX_DAYS = 400  # a custom range longer than this is refused


class Preset(StrEnum):
    TODAY = "today"
    YESTERDAY = "yesterday"
    LAST_7_DAYS = "last_7_days"
    LAST_30_DAYS = "last_30_days"
    THIS_MONTH = "this_month"
    LAST_MONTH = "last_month"
    CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class Period:
    """Local days ``first`` to ``last`` (inclusive) in ``zone``; ``start``/``end`` in UTC."""

    first: date
    last: date
    zone: ZoneInfo

    @property
    def start(self) -> datetime:
        return local_midnight(self.first, self.zone)

    @property
    def end(self) -> datetime:
        return local_midnight(self.last + timedelta(days=1), self.zone)


def local_midnight(day: date, zone: ZoneInfo) -> datetime:
    """The UTC instant a local day begins (the first instant, should a DST change skip it)."""
    return datetime.combine(day, time(0), zone).astimezone(UTC)


def resolve_period(
    preset: Preset,
    zone: ZoneInfo,
    now: datetime,
    *,
    first: date | None = None,
    last: date | None = None,
) -> Period:
    """The local days a preset names at ``now`` ("last 7 days" ends today).

    >>> from datetime import UTC
    >>> p = resolve_period(Preset.YESTERDAY, ZoneInfo("America/Sao_Paulo"),
    ...                    datetime(2026, 3, 1, 2, 0, tzinfo=UTC))
    >>> p.first.isoformat(), p.start.isoformat()
    ('2026-02-27', '2026-02-27T03:00:00+00:00')
    """
    period = _local_days(preset, zone, now, first, last)
    if not _in_calendar(period):
        raise InvalidInput({"period": "must fall between the years 1 and 9999 in its time zone"})
    return period


def _in_calendar(period: Period) -> bool:
    """Whether the period's start and end exist as UTC instants (years 1 to 9999)."""
    try:
        return period.start < period.end
    except OverflowError:  # 9999-12-31 has no next day; Tokyo's 0001-01-01 began in year 0
        return False


def _local_days(
    preset: Preset, zone: ZoneInfo, now: datetime, first: date | None, last: date | None
) -> Period:
    today = now.astimezone(zone).date()
    if preset is Preset.CUSTOM:
        if first is None or last is None:
            raise InvalidInput({"period": "a custom period needs its first and last day"})
        if last < first or (last - first).days >= MAX_DAYS:
            raise InvalidInput({"last": f"must be on or after first, at most {MAX_DAYS} days on"})
        return Period(first, last, zone)
    if preset is Preset.TODAY:
        return Period(today, today, zone)
    if preset is Preset.YESTERDAY:
        yesterday = today - timedelta(days=1)
        return Period(yesterday, yesterday, zone)
    if preset is Preset.LAST_7_DAYS:
        return Period(today - timedelta(days=6), today, zone)
    if preset is Preset.LAST_30_DAYS:
        return Period(today - timedelta(days=29), today, zone)
    month_start = today.replace(day=1)
    if preset is Preset.THIS_MONTH:
        return Period(month_start, today, zone)
    previous_end = month_start - timedelta(days=1)
    return Period(previous_end.replace(day=1), previous_end, zone)


def zone_named(name: str) -> ZoneInfo:
    """The IANA time zone ``name``, or InvalidInput."""
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError) as error:
        raise InvalidInput({"timezone": "unknown time zone"}) from error
