"""run_report(): a report as asked (preset or days, time zone, levels, filters, sort), one
level at a time and a page at a time.

A report's levels open lazily, as in Voluum or RedTrack: it answers the rows of one level (the
first, or the one under ``parent``, the values of the levels above), each level's work and
answer bounded by its page. Rows come sorted (by a metric, else by clicks, or in time order for
a time level); ``row_count`` says how many the level has, and ``others`` carries the sum of the
rows not on the page, so that rows and others add up to the totals. ``flat`` asks for every
level at once instead, as one table (the CSV export), bounded the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from sqlalchemy import Connection

from trilha.errors import InvalidInput
from trilha.hold import hold_at
from trilha.reports.builder import (
    MAX_LEVELS,
    Report,
    Row,
    build_report,
    check_grouping,
    labels_of,
)
from trilha.reports.dimensions import CLICK_COLUMNS, TIME, Dimension
from trilha.reports.metrics import METRIC_NAMES, Counts, metrics
from trilha.reports.periods import Preset, resolve_period, zone_named
from trilha.reports.query import Selection, top_keys
from trilha.workspaces import Workspace

MAX_FILTERS = 20
MAX_FILTER = 300  # characters of a filter's value
DEFAULT_ROWS: Final = 100  # rows on a page
MAX_ROWS: Final = 1000  # the most a page may ask for
MAX_OFFSET: Final = 1_000_000
CSV_ROWS: Final = 100_000  # rows a CSV export writes at most, then the sum of the rest
SQL_PAGES: Final = 2000  # rows up to a page's end that the database sorts and cuts
CLICK_MEASURES: Final = frozenset({"clicks", "unique_clicks", "bot_clicks"})
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
    sort: str | None = None  # a metric; None: by clicks (a time level: in time order)
    descending: bool = True
    parent: tuple[str, ...] = ()  # values of the first levels: the rows of the next are asked
    limit: int | None = DEFAULT_ROWS  # rows on the page; None (trilha's own callers): all
    offset: int = 0
    flat: bool = False  # every level at once, as one table


def run_report(
    conn: Connection, workspace: Workspace, query: ReportQuery, *, now: datetime
) -> Report:
    check_page(query)
    zone = zone_named(query.timezone or workspace.timezone)
    period = resolve_period(query.preset, zone, now, first=query.first, last=query.last)
    first, last, filters = _under(query.group_by, query.parent, period.first, period.last, query)
    if (first, last) != (period.first, period.last):
        period = resolve_period(Preset.CUSTOM, zone, now, first=first, last=last)
    level = len(query.parent)
    levels = query.group_by if query.flat else query.group_by[level : level + 1]
    selection = Selection(
        workspace_id=workspace.id,
        period=period,
        group_by=levels,
        filters=filters,
        by_click_time=query.by_click_time,
        hold=hold_at(conn, workspace.id, workspace.hold_days, now),
    )
    if _sorts_in_sql(query, levels):
        report = _top_page(conn, selection, query, workspace.currency)
    else:
        report = _page(conn, selection, query, workspace.currency)
    above = labels_of(query.group_by[: len(query.parent)], query.parent, report.names)
    return replace(
        report,
        rows=[Row(query.parent + r.key, above + r.labels, r.counts) for r in report.rows],
        levels=query.group_by,
        parent=query.parent,
    )


def _page(conn: Connection, selection: Selection, query: ReportQuery, currency: str) -> Report:
    """Every row of the level, sorted and cut here."""
    report = build_report(conn, selection, currency=currency)
    rows = sorted(report.rows, key=_sort_key(query, selection.group_by, report.currency))
    end = None if query.limit is None else query.offset + query.limit
    page, following = rows[query.offset : end], rows[end or len(rows) :]
    return replace(
        report,
        rows=page,
        row_count=len(rows),
        others=_sum(rows[: query.offset] + following),
        after=_sum(following),
    )


def _sorts_in_sql(query: ReportQuery, levels: tuple[Dimension, ...]) -> bool:
    """Whether the database can sort and cut the level: one dimension of the clicks with many
    values (sub-ids, ad ids, ...), sorted by a count of clicks, a page not far in."""
    return (
        not query.flat
        and query.limit is not None
        and query.offset + query.limit <= SQL_PAGES
        and len(levels) == 1
        and levels[0] in CLICK_COLUMNS
        and levels[0] not in (*TIME, Dimension.CAMPAIGN, Dimension.SOURCE)
        and (query.sort or "clicks") in CLICK_MEASURES
    )


def _top_page(conn: Connection, selection: Selection, query: ReportQuery, currency: str) -> Report:
    """The level's page from its top values as the database sorts them: only the rows up to
    the page's end are added up, the totals apart, and the rest is what they leave."""
    assert query.limit is not None  # noqa: S101 -- _sorts_in_sql's condition
    end = query.offset + query.limit
    keys, values = top_keys(
        conn,
        selection,
        currency=currency,
        measure=query.sort or "clicks",
        descending=query.descending or query.sort is None,
        count=end,
    )
    (dimension,) = selection.group_by
    among = replace(selection, among=(dimension, frozenset(keys)))
    report = build_report(conn, among, currency=currency)
    whole = build_report(conn, replace(selection, group_by=()), currency=currency)
    place = {key: i for i, key in enumerate(keys)}
    rows = sorted(report.rows, key=lambda row: place.get(row.key[0], end))
    page = rows[query.offset :]
    shown = _sum(page) or Counts()
    others = whole.totals.minus(shown)
    return replace(
        report,
        selection=selection,
        rows=page,
        totals=whole.totals,
        other_currency=whole.other_currency,
        row_count=values,
        others=others if values > len(page) else None,
        after=others.minus(_sum(rows[: query.offset]) or Counts()) if values > end else None,
    )


def _sum(rows: list[Row]) -> Counts | None:
    if not rows:
        return None
    total = Counts()
    for row in rows:
        total.add(row.counts)
    return total


def check_page(query: ReportQuery) -> None:
    """Levels, parent, sort and page as a report can answer them; InvalidInput otherwise."""
    check_grouping(query.group_by, query.filters)
    errors = {}
    if query.parent and (query.flat or len(query.parent) >= len(query.group_by)):
        errors["parent"] = "one value for each level above the one asked, fewer than the levels"
    if query.sort is not None and query.sort not in METRIC_NAMES:
        errors["sort"] = "not a metric"
    most = CSV_ROWS if query.flat else MAX_ROWS
    if query.limit is not None and not 1 <= query.limit <= most:
        errors["limit"] = f"from 1 to {most}"
    if not 0 <= query.offset <= MAX_OFFSET:
        errors["offset"] = f"from 0 to {MAX_OFFSET}"
    if errors:
        raise InvalidInput(errors)


def _under(
    levels: tuple[Dimension, ...],
    values: tuple[str, ...],
    first: date,
    last: date,
    query: ReportQuery,
) -> tuple[date, date, dict[Dimension, str]]:
    """The days and filters of the rows under ``values`` (a time row narrows the days)."""
    filters = dict(query.filters)
    for dimension, value in zip(levels, values, strict=False):
        if dimension in TIME:
            try:
                start, end = _bucket_days(dimension, value)
            except ValueError:
                raise InvalidInput({"parent": f"{value[:20]!r} is no {dimension.value}"}) from None
            first, last = max(first, start), min(last, end)
        else:
            filters[dimension] = value
    if first > last:
        raise InvalidInput({"parent": "outside the period"})
    return first, last, filters


def _sort_key(
    query: ReportQuery, levels: tuple[Dimension, ...], currency: str
) -> Callable[[Row], tuple[Any, ...]]:
    """By the metric asked (rows where it is undefined, a rate over no clicks, last), else by
    clicks, most first, or in time order when the level is a time; ties by their values."""
    if query.sort is None and levels and levels[-1] in TIME and not query.flat:
        return lambda row: (row.key,)
    metric = query.sort or "clicks"
    sign = -1 if (query.descending or query.sort is None) else 1

    def key(row: Row) -> tuple[Any, ...]:
        value = metrics(row.counts, currency)[metric]
        return value is None, sign * Decimal(value or 0), row.key

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
    parent = tuple(value[:MAX_FILTER] for value in many("parent")[:MAX_LEVELS])
    limit = choice("limit", int, DEFAULT_ROWS)
    offset = choice("offset", int, 0)
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
        parent=parent,
        limit=limit,
        offset=offset,
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
    params += [("parent", value) for value in query.parent]
    if query.limit is not None and query.limit != DEFAULT_ROWS:
        params.append(("limit", str(query.limit)))
    if query.offset:
        params.append(("offset", str(query.offset)))
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
    for dimension, value in zip(report.levels or report.selection.group_by, row.key, strict=False):
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
