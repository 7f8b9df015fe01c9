"""The SQL of reports: click counts (from the hourly rollups when they can answer, else from the
click rows) and conversion sums, each grouped by a time slot and dimensions.

Rows come back keyed by (slot start in UTC seconds, or None; dimension values); the builder
folds the slots into local days, weeks and months.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Integer,
    Select,
    Table,
    and_,
    case,
    cast,
    false,
    func,
    literal,
    or_,
    select,
    true,
    union_all,
)

from trilha.db.schema import (
    click_hours,
    click_sub1_days,
    click_sub1_hours,
    clicks,
    clicks_made,
    conversions,
    epoch_seconds,
    event_types,
    workspace_clicks,
)
from trilha.hold import Hold
from trilha.reports.dimensions import (
    CLICK_COLUMNS,
    CONVERSION_COLUMNS,
    ROLLED_UP,
    TIME,
    Dimension,
)
from trilha.reports.periods import Period

HOUR = 3600
DAY = 86400
QUARTER = 900  # every time zone's offset is a whole number of quarter hours


@dataclass(frozen=True, slots=True)
class Selection:
    """Which rows a report reads: a workspace's, in a period, matching every filter."""

    workspace_id: str
    period: Period
    group_by: tuple[Dimension, ...]
    filters: Mapping[Dimension, str]
    by_click_time: bool = False
    hold: Hold | None = None  # None: nothing is on hold
    # Only the rows whose value of this dimension is one of these (a page of top rows).
    among: tuple[Dimension, frozenset[str]] | None = None

    @property
    def has_time(self) -> bool:
        return any(d in TIME for d in self.group_by)

    @property
    def dimensions(self) -> tuple[Dimension, ...]:
        return tuple(d for d in self.group_by if d not in TIME)


Grouped = tuple[int | None, tuple[str, ...]]


def uses_rollups(selection: Selection) -> bool:
    """Whether the hourly rollups hold the answer: only rolled-up dimensions, and every hour of
    the period (and of each time bucket) whole in the report's time zone."""
    named = set(selection.dimensions) | set(selection.filters)
    return named <= ROLLED_UP and _in_whole_hours(selection.period)


def _in_whole_hours(period: Period) -> bool:
    """Whether the period's local hours are whole UTC hours (its zone's offset a whole number
    of hours at both ends), so that time slots of an hour fold into its days exactly."""
    return all(
        _whole_hours(period.zone.utcoffset(moment.replace(tzinfo=None)))
        for moment in (period.start, period.end)
    )


@dataclass(frozen=True, slots=True)
class Slots:
    """How a report's times are grouped in SQL: ``(UTC seconds + shift) // width``. By local
    day when no level is finer and the zone's offset holds over the whole period (the offset is
    the shift), else by hour or quarter hour, folded into the report's buckets in Python."""

    width: int
    shift: int = 0

    def start(self, slot: int) -> int:
        """The UTC second a slot starts at."""
        return slot * self.width - self.shift


def _slots(selection: Selection, finest: int) -> Slots:
    """The widest slots that fold exactly into the report's buckets; ``finest``: the slots its
    source can give (an hour for the rollups, a quarter hour for rows)."""
    if Dimension.HOUR not in selection.group_by:
        offset = constant_offset(selection.period)
        if offset is not None and offset % finest == 0:
            return Slots(DAY, offset)
    return Slots(finest)


def constant_offset(period: Period) -> int | None:
    """The zone's offset from UTC in seconds, when it is the same at every local midnight of
    the period and at its end (no change of summer time within); None otherwise."""
    moments = [period.end.astimezone(period.zone)]
    day = period.first
    while day <= period.last:
        moments.append(datetime.combine(day, time(), tzinfo=period.zone))
        day += timedelta(days=1)
    offsets = {moment.utcoffset() for moment in moments}
    (offset, *others) = offsets
    seconds = None if offset is None else int(offset.total_seconds())
    return None if others else seconds


def _whole_hours(offset: Any) -> bool:
    return offset is not None and offset.total_seconds() % HOUR == 0


def click_counts(conn: Connection, selection: Selection) -> Iterator[tuple[Grouped, list[int]]]:
    """(clicks, unique clicks, bot clicks) per slot and dimension values; a key may come more
    than once (from the hours and the days of the rollups), to be added up."""
    if uses_rollups(selection):
        slots = _slots(selection, HOUR)
        queries = _rollup_queries(selection, slots)
    else:
        slots = _slots(selection, QUARTER)
        queries = [_raw_click_query(conn, selection, slots)]
    for query in queries:
        for row in conn.execute(query):
            if row.n:  # no group: one row of NULL sums when nothing matched
                yield _grouped(row, selection, slots), [int(row.n), int(row.u), int(row.b)]


def _grouped(row: Any, selection: Selection, slots: Slots) -> Grouped:
    slot = slots.start(int(row.slot)) if selection.has_time else None
    return slot, tuple("" if v is None else str(v) for v in row[1 : 1 + len(selection.dimensions)])


def _rollup_queries(selection: Selection, slots: Slots) -> list[Select[Any]]:
    """The hours of the period; by sub1 without time levels, its whole UTC days from the daily
    sums and only the hours at either end from the hourly ones."""
    start, end = (
        int(t.timestamp()) // HOUR for t in (selection.period.start, selection.period.end)
    )
    named = {*selection.dimensions, *selection.filters}
    if Dimension.SUB1 not in named:
        return [_rollup_query(click_hours, "hour", start, end, selection, slots)]
    first_day, last_day = -(-start // 24), end // 24
    if selection.has_time or first_day >= last_day:
        return [_rollup_query(click_sub1_hours, "hour", start, end, selection, slots)]
    return [
        _rollup_query(click_sub1_hours, "hour", start, first_day * 24, selection, slots),
        _rollup_query(click_sub1_days, "day", first_day, last_day, selection, slots),
        _rollup_query(click_sub1_hours, "hour", last_day * 24, end, selection, slots),
    ]


def _rollup_query(
    table: Table, unit: str, low: int, high: int, selection: Selection, slots: Slots
) -> Select[Any]:
    seconds = HOUR if unit == "hour" else DAY
    slot: ColumnElement[Any] | None = None
    if selection.has_time:
        slot = table.c[unit]
        if (seconds, 0) != (slots.width, slots.shift):  # whole hours of shift (see _slots)
            slot = (slot + slots.shift // seconds) // (slots.width // seconds)
    columns = [table.c[CLICK_COLUMNS[d]] for d in selection.dimensions]
    where = [table.c.workspace_id == selection.workspace_id, table.c[unit] >= low]
    where += [table.c[unit] < high]
    where += [table.c[CLICK_COLUMNS[d]] == value for d, value in selection.filters.items()]
    where += _among(selection, lambda d: table.c[CLICK_COLUMNS[d]])
    return _grouping(
        slot,
        columns,
        [func.sum(table.c.clicks), func.sum(table.c.unique_clicks), func.sum(table.c.bot_clicks)],
        where,
    )


def _raw_click_query(conn: Connection, selection: Selection, slots: Slots) -> Select[Any]:
    c = clicks.c
    slot = _slot(conn, c.created_at, slots) if selection.has_time else None
    columns = [c[CLICK_COLUMNS[d]] for d in selection.dimensions]
    period = selection.period
    where = [workspace_clicks(selection.workspace_id), *clicks_made(period.start, period.end)]
    where += [_equals(c[CLICK_COLUMNS[d]], v) for d, v in selection.filters.items()]
    where += _among(selection, lambda d: c[CLICK_COLUMNS[d]])
    if any(d not in CLICK_COLUMNS for d in selection.filters):
        where.append(false())  # a click has no merchant, event type or status
    return _grouping(
        slot, columns, [func.count(), _count_true(c.is_unique), _count_true(c.is_bot)], where
    )


def _grouping(
    slot: ColumnElement[Any] | None,
    columns: Sequence[ColumnElement[Any]],
    sums: Sequence[ColumnElement[Any]],
    where: Sequence[ColumnElement[bool]],
) -> Select[Any]:
    first = slot if slot is not None else cast(None, Integer)
    labelled = [
        first.label("slot"),
        *columns,
        *(s.label(n) for s, n in zip(sums, "nub", strict=False)),
    ]
    grouped = [*([slot] if slot is not None else []), *columns]
    return select(*labelled).where(and_(true(), *where)).group_by(*grouped)


def conversion_sums(conn: Connection, selection: Selection) -> Iterator[tuple[Grouped, Any]]:
    """Per slot and dimension values: conversions, their value and the part of it on hold, by
    status, currency and what their event type counts as."""
    v, e = conversions.c, event_types.c
    slots = _slots(selection, HOUR if _in_whole_hours(selection.period) else QUARTER)
    slot = _slot(conn, _conversion_moment(selection), slots) if selection.has_time else None
    columns = [_conversion_column(d) for d in selection.dimensions]
    # In the workspace's currency (trilha.currencies); unconverted ones come back apart.
    kinds = [v.status, v.report_currency, e.counts_as_conversion, e.counts_as_revenue]
    sums = [func.count(), func.sum(v.report_value_minor), func.sum(_on_hold(selection.hold))]
    query = _grouping(slot, [*columns, *kinds], sums, _conversion_where(selection))
    query = query.select_from(
        _conversions_from(selection).outerjoin(
            event_types, and_(e.workspace_id == v.workspace_id, e.name == v.event_type)
        )
    )
    levels = len(selection.dimensions)
    for row in conn.execute(query):
        if row.n:
            yield _grouped(row, selection, slots), row[1 + levels :]


def _conversion_moment(selection: Selection) -> ColumnElement[Any]:
    return clicks.c.created_at if selection.by_click_time else conversions.c.created_at


def _conversion_where(selection: Selection) -> list[ColumnElement[bool]]:
    v, period = conversions.c, selection.period
    moment = _conversion_moment(selection)
    where = [v.workspace_id == selection.workspace_id, moment >= period.start, moment < period.end]
    where += [v.is_test.is_(False)]  # a "send test postback" never counts
    where += [_equals(_conversion_column(d), value) for d, value in selection.filters.items()]
    return where + _among(selection, _conversion_column)


def _conversions_from(selection: Selection) -> FromClause:
    """The conversions, joined to their clicks only when the report needs them: for the
    click's time, or a dimension only the click has."""
    named = (*selection.dimensions, *selection.filters)
    if selection.among is not None:
        named += (selection.among[0],)
    if selection.by_click_time or any(d not in CONVERSION_COLUMNS for d in named):
        return conversions.outerjoin(clicks, clicks.c.id == conversions.c.click_id)
    return conversions


def top_keys(
    conn: Connection,
    selection: Selection,
    *,
    currency: str,
    measure: str,
    descending: bool,
    count: int,
) -> tuple[list[str], int]:
    """The first ``count`` values of the selection's one dimension by a click measure (then by
    value), among every value its clicks or its conversions in ``currency`` have, and how many
    values there are: the database sorts and cuts, and Python sees only the page."""
    (dimension,) = selection.dimensions
    parts: list[Select[Any]] = []
    if uses_rollups(selection):
        parts += _rollup_queries(selection, Slots(HOUR))
    else:
        parts.append(_raw_click_query(conn, selection, Slots(QUARTER)))
    v = conversions.c
    zero = literal(0)
    sold = select(
        cast(None, Integer).label("slot"),
        _conversion_column(dimension),
        zero.label("n"),
        zero.label("u"),
        zero.label("b"),
    ).where(*_conversion_where(selection), v.report_currency == currency)
    parts.append(sold.select_from(_conversions_from(selection)))
    values = union_all(*parts).subquery()
    key = func.coalesce(values.c[1], "").label("key")
    total = func.sum(values.c[{"clicks": "n", "unique_clicks": "u", "bot_clicks": "b"}[measure]])
    query = (
        select(key, func.count().over().label("values"))
        .group_by(key)
        .order_by(total.desc() if descending else total.asc(), key)
        .limit(count)
    )
    rows = conn.execute(query).all()
    return [str(row.key) for row in rows], int(rows[0].values) if rows else 0


def _on_hold(hold: Hold | None) -> ColumnElement[Any]:
    """An approved conversion's value while its hold lasts (approved since the hold's start,
    its merchant's or the workspace's), else 0."""
    v = conversions.c
    if hold is None:
        return literal(0)
    since: ColumnElement[Any] = literal(hold.since, v.status_changed_at.type)
    if hold.merchants:
        since = case(
            *(
                (v.merchant_id == merchant_id, moment)
                for merchant_id, moment in hold.merchants.items()
            ),
            else_=hold.since,
        )
    held = and_(v.status == "approved", v.status_changed_at > since)
    return case((held, v.report_value_minor), else_=0)


def _conversion_column(dimension: Dimension) -> ColumnElement[Any]:
    if dimension in CONVERSION_COLUMNS:
        return conversions.c[CONVERSION_COLUMNS[dimension]]
    return clicks.c[CLICK_COLUMNS[dimension]]


def _among(
    selection: Selection, column_of: Callable[[Dimension], ColumnElement[Any]]
) -> list[ColumnElement[bool]]:
    """The selection's ``among``, as a condition on the column ``column_of`` gives."""
    if selection.among is None:
        return []
    dimension, values = selection.among
    column = column_of(dimension)
    named = [value for value in values if value]
    inside = column.in_(named)
    return [or_(inside, _equals(column, "")) if "" in values else inside]


def _equals(column: ColumnElement[Any], value: str) -> ColumnElement[bool]:
    """A dimension equal to value; "" stands for none, stored empty or NULL (the rollups' "")."""
    return or_(column.is_(None), column == "") if value == "" else column == value


def _count_true(column: ColumnElement[Any]) -> ColumnElement[Any]:
    return func.sum(cast(column, Integer))


def _slot(
    conn: Connection, moment: ColumnElement[Any], slots: Slots = Slots(QUARTER)
) -> ColumnElement[Any]:
    """The slot a time falls in (see Slots), counted from 1970-01-01 UTC."""
    return (epoch_seconds(conn.dialect, moment) + slots.shift) // slots.width


def click_cost_sums(
    conn: Connection, selection: Selection, campaign_ids: Sequence[str]
) -> Iterator[tuple[Grouped, int]]:
    """What the clicks' URLs said they cost (trilha.costs), per quarter hour and dimension
    values, for some campaigns; read from the click rows through the campaign's index."""
    c = clicks.c
    period = selection.period
    where = [workspace_clicks(selection.workspace_id), c.campaign_id.in_(campaign_ids)]
    where += [*clicks_made(period.start, period.end), c.cost.is_not(None)]
    where += [_equals(c[CLICK_COLUMNS[d]], v) for d, v in selection.filters.items()]
    where += _among(selection, lambda d: c[CLICK_COLUMNS[d]])
    columns = [c[CLICK_COLUMNS[d]] for d in selection.dimensions]
    query = _grouping(_slot(conn, c.created_at), columns, [func.sum(c.cost)], where)
    for row in conn.execute(query):
        yield _grouped(row, selection, Slots(QUARTER)), int(row.n)
