"""run_report(): a report as asked (preset or days, time zone, levels, filters, sort)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import Connection

from trilha.errors import InvalidInput
from trilha.reports.builder import Report, Row, build_report, check_grouping
from trilha.reports.dimensions import Dimension
from trilha.reports.metrics import METRIC_NAMES, metrics
from trilha.reports.periods import Preset, resolve_period, zone_named
from trilha.reports.query import Selection
from trilha.workspaces import Workspace


@dataclass(frozen=True, slots=True)
class ReportQuery:
    preset: Preset = Preset.LAST_7_DAYS
    first: date | None = None
    last: date | None = None
    timezone: str | None = None  # None: the workspace's
    group_by: tuple[Dimension, ...] = (Dimension.CAMPAIGN,)
    filters: Mapping[Dimension, str] = field(default_factory=dict)
    by_click_time: bool = False
    sort: str | None = None  # a metric; None: by the grouping levels
    descending: bool = True


def run_report(
    conn: Connection, workspace: Workspace, query: ReportQuery, *, now: datetime
) -> Report:
    check_grouping(query.group_by, query.filters)
    zone = zone_named(query.timezone or workspace.timezone)
    period = resolve_period(query.preset, zone, now, first=query.first, last=query.last)
    selection = Selection(
        workspace_id=workspace.id,
        period=period,
        group_by=query.group_by,
        filters=query.filters,
        by_click_time=query.by_click_time,
    )
    if query.sort is not None and query.sort not in METRIC_NAMES:
        raise InvalidInput({"sort": "not a metric"})
    report = build_report(conn, selection, currency=workspace.currency)
    if query.sort is not None:
        report.rows.sort(key=_sort_key(query.sort, report.currency), reverse=query.descending)
    return report


def _sort_key(metric: str, currency: str) -> Callable[[Row], tuple[bool, Decimal]]:
    """Rows by one metric; rows where it is undefined (a rate over no clicks) last."""

    def key(row: Row) -> tuple[bool, Decimal]:
        value = metrics(row.counts, currency)[metric]
        return value is not None, Decimal(value or 0)

    return key
