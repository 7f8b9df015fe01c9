"""run_report(): a report as asked (preset or days, time zone, levels, filters, sort)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from sqlalchemy import Connection

from trilha.errors import InvalidInput
from trilha.hold import hold_at
from trilha.reports.builder import Report, Row, build_report, check_grouping
from trilha.reports.dimensions import TIME, Dimension
from trilha.reports.metrics import METRIC_NAMES, metrics
from trilha.reports.periods import Preset, resolve_period, zone_named
from trilha.reports.query import Selection
from trilha.workspaces import Workspace

MAX_FILTERS = 20
MAX_FILTER = 300  # characters of a filter's value
# What a row opens into: the first of these the row does not already pin down.
DRILL_CHAIN: Final = (
    Dimension.CAMPAIGN,
    Dimension.SOURCE,
    *(Dimension(f"sub{n}") for n in range(1, 11)),
)


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
        hold=hold_at(conn, workspace.id, workspace.hold_days, now),
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


def parse_filter(text: str) -> tuple[Dimension, str]:
    """``dimension:value`` (an empty value: rows without one).

    >>> parse_filter("sub1:ad 7")
    (<Dimension.SUB1: 'sub1'>, 'ad 7')
    """
    name, colon, value = text.partition(":")
    try:
        dimension = Dimension(name)
    except ValueError:
        dimension = None
    if not colon or dimension is None or len(value) > MAX_FILTER:
        raise InvalidInput({"filter": "must be dimension:value"})
    return dimension, value


def read_query(
    one: Callable[[str], str | None], many: Callable[[str], Sequence[str]]
) -> ReportQuery:
    """A report as a form or a link asks for it: ``one(name)`` a parameter, ``many(name)`` its
    repeated values; the same names as the API's. Every problem at once, as InvalidInput."""
    errors: dict[str, str] = {}

    def choice(name: str, parse: Callable[[str], Any], default: Any) -> Any:
        text = (one(name) or "").strip()
        if not text:
            return default
        try:
            return parse(text[:64])
        except ValueError:
            errors[name] = "not one of the choices"
            return default

    preset = choice("preset", Preset, Preset.LAST_7_DAYS)
    first = choice("first", date.fromisoformat, None)
    last = choice("last", date.fromisoformat, None)
    levels: list[Dimension] = []
    for text in many("group_by")[:4]:
        if text:
            try:
                levels.append(Dimension(text))
            except ValueError:
                errors["group_by"] = "not a level"
    filters: dict[Dimension, str] = {}
    for text in many("filter")[: MAX_FILTERS + 1]:
        try:
            dimension, value = parse_filter(text)
        except InvalidInput as error:
            errors.update(error.fields)
        else:
            filters[dimension] = value
    if len(many("filter")) > MAX_FILTERS:
        errors["filter"] = f"at most {MAX_FILTERS}"
    timezone = (one("timezone") or "").strip()[:64] or None
    sort = (one("sort") or "").strip()[:40] or None
    if sort is not None and sort not in METRIC_NAMES:
        errors["sort"] = "not a metric"
    if errors:
        raise InvalidInput(errors)
    return ReportQuery(
        preset=preset,
        first=first,
        last=last,
        timezone=timezone,
        group_by=tuple(levels) or (Dimension.CAMPAIGN,),
        filters=filters,
        by_click_time=one("attribution") == "click_time",
        sort=sort,
        descending=one("order") != "asc",
    )


def query_params(query: ReportQuery) -> list[tuple[str, str]]:
    """The parameters that ask for ``query`` again (read_query's names), defaults left out.

    >>> query_params(ReportQuery(group_by=(Dimension.DAY,), filters={Dimension.SUB1: "a"}))
    [('preset', 'last_7_days'), ('group_by', 'day'), ('filter', 'sub1:a')]
    """
    params = [("preset", query.preset.value)]
    if query.preset is Preset.CUSTOM and query.first and query.last:
        params += [("first", query.first.isoformat()), ("last", query.last.isoformat())]
    if query.timezone:
        params.append(("timezone", query.timezone))
    params += [("group_by", d.value) for d in query.group_by]
    params += [("filter", f"{d.value}:{value}") for d, value in query.filters.items()]
    if query.by_click_time:
        params.append(("attribution", "click_time"))
    if query.sort:
        params += [("sort", query.sort), ("order", "desc" if query.descending else "asc")]
    return params


def drill_down(query: ReportQuery, report: Report, row: Row) -> ReportQuery | None:
    """The report a row opens: filtered on the row's values (a time row narrows the period to
    its days), grouped by the next level of DRILL_CHAIN; None when nothing is left to open.

    >>> from trilha.reports.metrics import Counts
    >>> from trilha.reports.periods import Period
    >>> from zoneinfo import ZoneInfo
    >>> period = Period(date(2026, 3, 1), date(2026, 3, 31), ZoneInfo("UTC"))
    >>> levels = (Dimension.WEEK, Dimension.CAMPAIGN)
    >>> report = Report(Selection("w", period, levels, {}), "BRL", [], Counts(), 0, False, {})
    >>> row = Row(("2026-02-23", "c1"), ("2026-02-23", "Promo"), Counts())
    >>> opened = drill_down(ReportQuery(group_by=levels), report, row)
    >>> str(opened.first), str(opened.last), opened.group_by, opened.filters[Dimension.CAMPAIGN]
    ('2026-03-01', '2026-03-01', (<Dimension.SOURCE: 'source'>,), 'c1')
    """
    period = report.selection.period
    first, last = period.first, period.last
    filters = dict(query.filters)
    for dimension, value in zip(report.selection.group_by, row.key, strict=True):
        if dimension in TIME:
            start, end = _bucket_days(dimension, value)
            first, last = max(first, start), min(last, end)
        else:
            filters[dimension] = value
    following = [d for d in DRILL_CHAIN if d not in filters]
    if not following:
        return None
    return replace(
        query,
        preset=Preset.CUSTOM,
        first=first,
        last=last,
        group_by=(following[0],),
        filters=filters,
    )


def _bucket_days(dimension: Dimension, label: str) -> tuple[date, date]:
    """The local days of a time row's label (time_label's format)."""
    if dimension is Dimension.MONTH:
        start = date.fromisoformat(f"{label}-01")
        return start, (start + timedelta(days=31)).replace(day=1) - timedelta(days=1)
    start = date.fromisoformat(label[:10])
    return start, start + timedelta(days=6 if dimension is Dimension.WEEK else 0)
