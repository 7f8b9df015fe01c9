"""The home screen: today against yesterday, the last 30 days day by day, today's top campaigns,
and the signals that something broke (seed 002): postbacks that stopped landing on clicks or
stopped being read, no postback at all, traffic sources and merchants that went quiet."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final

from sqlalchemy import Connection, func, select

from trilha.conversions.outcome import Outcome
from trilha.db.schema import click_hours, merchants, postback_log, traffic_sources
from trilha.reports.builder import Report, Row
from trilha.reports.dimensions import Dimension
from trilha.reports.metrics import metrics
from trilha.reports.periods import Preset
from trilha.reports.request import ReportQuery, run_report
from trilha.workspaces import Workspace

RECENT: Final = timedelta(hours=24)
BEFORE: Final = timedelta(days=7)  # what "usual" means: the 7 days before the last 24 hours
JUMP_MIN_POSTBACKS: Final = 3  # fewer orphans or invalid postbacks than this are no signal
JUMP_MIN_RATE: Final = 0.2
QUIET_MIN_CLICKS: Final = 20  # people's clicks in 7 days with no postback at all: a signal
TOP_CAMPAIGNS: Final = 5


class Signal(StrEnum):
    NO_POSTBACKS = "no_postbacks"  # the postback URL is likely not registered at the platform
    ORPHANS = "orphans"  # the offer URL likely lost the click id
    INVALID = "invalid"  # the merchant's mapping likely does not fit what the platform sends
    SOURCE_STOPPED = "source_stopped"
    MERCHANT_STOPPED = "merchant_stopped"


@dataclass(frozen=True, slots=True)
class Health:
    outcomes: dict[str, int]  # the last 24 hours' postbacks by outcome
    signals: list[tuple[Signal, str]]  # each with what it is about: a rate, or a name


@dataclass(frozen=True, slots=True)
class Home:
    today: Report
    yesterday: Report
    days: Report  # the last 30 days, by day
    top: list[Row]  # today's campaigns with the most net revenue (orphan sales have none)
    orphans: Row | None  # today's sales that reached no campaign, when there are any
    health: Health


def home(conn: Connection, workspace: Workspace, *, now: datetime) -> Home:
    def report(preset: Preset, *levels: Dimension) -> Report:
        asked = ReportQuery(preset=preset, group_by=levels, limit=None)  # a month's days at most
        return run_report(conn, workspace, asked, now=now)

    today = report(Preset.TODAY, Dimension.CAMPAIGN)
    ranked = sorted(
        today.rows, key=lambda row: metrics(row.counts, today.currency)["net_revenue"] or 0
    )
    return Home(
        today=today,
        yesterday=report(Preset.YESTERDAY),
        days=report(Preset.LAST_30_DAYS, Dimension.DAY),
        top=[
            row
            for row in reversed(ranked)
            if row.key[0] and (row.counts.clicks or row.counts.sales)
        ][:TOP_CAMPAIGNS],
        orphans=next((row for row in today.rows if not row.key[0] and row.counts.sales), None),
        health=health(conn, workspace.id, now=now),
    )


def health(conn: Connection, workspace_id: str, *, now: datetime) -> Health:
    """The last 24 hours against the 7 days before them."""
    recent_start, before_start = now - RECENT, now - RECENT - BEFORE
    recent = _outcomes(conn, workspace_id, recent_start, now)
    before = _outcomes(conn, workspace_id, before_start, recent_start)
    signals: list[tuple[Signal, str]] = []
    for outcome, signal in ((Outcome.ORPHAN, Signal.ORPHANS), (Outcome.INVALID, Signal.INVALID)):
        rate = jumped(recent, before, outcome)
        if rate is not None:
            signals.append((signal, f"{rate:.0%}"))
    if (
        not recent
        and not before
        and _people_clicks(conn, workspace_id, before_start) >= (QUIET_MIN_CLICKS)
    ):
        signals.append((Signal.NO_POSTBACKS, ""))
    for name in _quiet_sources(conn, workspace_id, before_start, recent_start):
        signals.append((Signal.SOURCE_STOPPED, name))
    for name in _quiet_merchants(conn, workspace_id, before_start, recent_start):
        signals.append((Signal.MERCHANT_STOPPED, name))
    return Health(outcomes=recent, signals=signals)


def jumped(recent: dict[str, int], before: dict[str, int], outcome: Outcome) -> float | None:
    """The recent share of ``outcome`` when it jumped: at least a few, at least a fifth of the
    postbacks, and at least twice its usual share.

    >>> jumped({"orphan": 4, "created": 6}, {"created": 50, "orphan": 2}, Outcome.ORPHAN)
    0.4
    >>> jumped({"orphan": 4, "created": 6}, {"created": 5, "orphan": 5}, Outcome.ORPHAN) is None
    True
    """
    count, total = recent.get(outcome, 0), sum(recent.values())
    if count < JUMP_MIN_POSTBACKS or count / total < JUMP_MIN_RATE:
        return None
    usual_total = sum(before.values())
    usual = before.get(outcome, 0) / usual_total if usual_total else 0.0
    return count / total if count / total >= 2 * usual else None


def _outcomes(
    conn: Connection, workspace_id: str, start: datetime, end: datetime
) -> dict[str, int]:
    p = postback_log.c
    query = (
        select(p.outcome, func.count())
        .where(p.workspace_id == workspace_id, p.received_at >= start, p.received_at < end)
        .group_by(p.outcome)
    )
    return {row[0]: row[1] for row in conn.execute(query)}


def _hour(moment: datetime) -> int:
    return int(moment.timestamp()) // 3600


def _people_clicks(conn: Connection, workspace_id: str, since: datetime) -> int:
    h = click_hours.c
    query = select(func.coalesce(func.sum(h.clicks - h.bot_clicks), 0)).where(
        h.workspace_id == workspace_id, h.hour >= _hour(since)
    )
    return int(conn.scalar(query) or 0)


def _quiet_sources(
    conn: Connection, workspace_id: str, before_start: datetime, recent_start: datetime
) -> list[str]:
    """Traffic sources with clicks in the 7 days before, and none in the last 24 hours."""
    h, s = click_hours.c, traffic_sources.c
    recent = _hour(recent_start)
    query = (
        select(s.name)
        .join_from(click_hours, traffic_sources, s.id == h.source_id)
        .where(h.workspace_id == workspace_id, h.hour >= _hour(before_start))
        .group_by(s.id, s.name)
        .having(func.max(h.hour) < recent)
        .order_by(s.name)
    )
    return list(conn.scalars(query))


def _quiet_merchants(
    conn: Connection, workspace_id: str, before_start: datetime, recent_start: datetime
) -> list[str]:
    """Merchants that sent postbacks in the 7 days before, and none in the last 24 hours."""
    p, m = postback_log.c, merchants.c
    query = (
        select(m.name)
        .join_from(postback_log, merchants, m.id == p.merchant_id)
        .where(p.workspace_id == workspace_id, p.received_at >= before_start)
        .group_by(m.id, m.name)
        .having(func.max(p.received_at) < recent_start)
        .order_by(m.name)
    )
    return list(conn.scalars(query))
