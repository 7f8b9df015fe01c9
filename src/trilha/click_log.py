"""The click log: a workspace's latest clicks, filtered and read a page at a time (newest first,
by keyset, never OFFSET), each with what it converted to; and one click with its conversions and
their status histories."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Select, exists
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.lookup import (
    Conversion,
    StatusChange,
    conversions_of_clicks,
    status_history,
)
from trilha.db.schema import campaigns, click_view, clicks, clicks_made, conversions
from trilha.dimensions import SUBS
from trilha.errors import InvalidInput, NotFound

MAX_PAGE = 1000


@dataclass(frozen=True, slots=True)
class ClickFilter:
    """What the log shows; None (or empty) leaves a filter out.

    ``from_day`` and ``to_day`` are whole days on the workspace's clock (``to_day`` included);
    ``since`` and ``until`` are exact times. ``before_id`` is the last id of the previous page.
    """

    campaign_id: str | None = None
    source_id: str | None = None
    country: str | None = None
    device_type: str | None = None
    subs: Mapping[str, str] = field(default_factory=dict)  # sub1..sub10 -> the value
    is_bot: bool | None = None
    converted: bool | None = None
    click_id: str | None = None
    from_day: date | None = None
    to_day: date | None = None
    since: datetime | None = None
    until: datetime | None = None
    before_id: str | None = None


@dataclass(frozen=True, slots=True)
class LoggedClick:
    row: Mapping[str, Any]  # the click's columns
    conversions: tuple[Conversion, ...]  # oldest first; empty: it did not convert (yet)

    @property
    def id(self) -> str:
        click_id: str = self.row["id"]
        return click_id


@dataclass(frozen=True, slots=True)
class ClickDetail:
    row: Mapping[str, Any]
    conversions: tuple[tuple[Conversion, tuple[StatusChange, ...]], ...]


def sub_filters(pairs: list[str]) -> dict[str, str]:
    """Sub-id filters written ``name:value``; a name that is no sub1..sub10 is refused.

    >>> sub_filters(["sub1:fb-01", "sub3:"])
    {'sub1': 'fb-01', 'sub3': ''}
    """
    subs: dict[str, str] = {}
    for pair in pairs:
        name, _, value = pair.partition(":")
        if name not in SUBS:
            raise InvalidInput({"sub": "must be sub1..sub10, a colon and the value"})
        subs[name] = value
    return subs


def day_start(day: date, timezone: str) -> datetime | None:
    """Midnight starting ``day`` on the clock of ``timezone``; None when that midnight lies
    outside the calendar in UTC (0001-01-01 in Tokyo), where a bound leaves nothing out.

    >>> day_start(date(2024, 5, 1), "America/Sao_Paulo").astimezone(UTC).isoformat()
    '2024-05-01T03:00:00+00:00'
    """
    try:
        start = datetime.combine(day, time(), ZoneInfo(timezone))
        start.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    return start


def _day_end(day: date, timezone: str) -> datetime | None:
    """Midnight ending ``day``; None after 9999-12-31, which has no next day."""
    try:
        return day_start(day + timedelta(days=1), timezone)
    except OverflowError:
        return None


async def list_click_log(
    conn: AsyncConnection, workspace_id: str, timezone: str, where: ClickFilter, *, limit: int
) -> list[LoggedClick]:
    """Newest first, at most ``limit`` (bounded by MAX_PAGE), each with its conversions. A
    click's id begins with its time (trilha.ids.mint_click_id), so the primary key, read
    backwards from the window's end, gives the clicks newest first and the keyset is the id."""
    query = _filtered(click_view.where(campaigns.c.workspace_id == workspace_id), where, timezone)
    if where.before_id is not None:
        query = query.where(clicks.c.id < where.before_id)
    ordered = query.order_by(clicks.c.id.desc())
    rows = [
        dict(row) for row in (await conn.execute(ordered.limit(min(limit, MAX_PAGE)))).mappings()
    ]
    found = await conversions_of_clicks(conn, workspace_id, [row["id"] for row in rows])
    return [LoggedClick(row, tuple(found.get(row["id"], ()))) for row in rows]


def _filtered(query: Select[Any], where: ClickFilter, timezone: str) -> Select[Any]:
    c = clicks.c
    for column, value in (
        (c.campaign_id, where.campaign_id),
        (c.source_id, where.source_id),
        (c.country, where.country),
        (c.device_type, where.device_type),
        (c.id, where.click_id),
        (c.is_bot, where.is_bot),
    ):
        if value is not None:
            query = query.where(column == value)
    for name, value in where.subs.items():
        if name in SUBS:
            query = query.where(c[name] == value)
    if where.converted is not None:
        # ix_conversions_click answers each probe.
        has_conversion = exists().where(conversions.c.click_id == c.id)
        query = query.where(has_conversion if where.converted else ~has_conversion)
    since, until = where.since, where.until
    if where.from_day is not None and (start := day_start(where.from_day, timezone)):
        since = max(since, start) if since is not None else start
    if where.to_day is not None and (end := _day_end(where.to_day, timezone)):
        until = min(until, end) if until is not None else end
    return query.where(*clicks_made(since, until))


async def get_click_detail(conn: AsyncConnection, workspace_id: str, click_id: str) -> ClickDetail:
    """One click with all its parameters, its conversions and each one's status history."""
    query = click_view.where(campaigns.c.workspace_id == workspace_id, clicks.c.id == click_id)
    row = (await conn.execute(query)).mappings().first()
    if row is None:
        raise NotFound("click not found")
    found = (await conversions_of_clicks(conn, workspace_id, [click_id])).get(click_id, [])
    histories = [tuple(await status_history(conn, c.id)) for c in found]
    return ClickDetail(dict(row), tuple(zip(found, histories, strict=True)))
