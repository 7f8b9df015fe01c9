"""build_report(): a report's rows and totals, from the click counts and conversion sums."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select

from trilha.db.schema import campaigns, merchants, traffic_sources
from trilha.errors import InvalidInput
from trilha.reports.costs import report_costs
from trilha.reports.dimensions import CLICK_COLUMNS, TIME, Dimension, time_label
from trilha.reports.metrics import Counts
from trilha.reports.query import Grouped, Selection, click_counts, conversion_sums, uses_rollups

MAX_LEVELS = 3
_COUNTED_SALES = {"approved", "refunded", "chargeback"}


@dataclass(frozen=True, slots=True)
class Row:
    key: tuple[str, ...]  # one value per grouping level; "" where the row has none
    labels: tuple[str, ...]  # what to show: names for campaigns, sources and merchants
    counts: Counts


@dataclass(frozen=True, slots=True)
class Report:
    selection: Selection
    currency: str
    rows: list[Row]
    totals: Counts
    other_currency: int  # conversions in another currency, left out (no rate to convert)
    from_rollups: bool
    names: Mapping[str, str]  # the workspace's campaigns, sources and merchants by id
    # What trilha.reports.request made of it: every level asked, the one these rows are of
    # (under ``parent``, the values of the levels above), how many rows that level has, and
    # the sum of those not among ``rows`` (None: none left out).
    levels: tuple[Dimension, ...] = ()
    parent: tuple[str, ...] = ()
    row_count: int = 0
    others: Counts | None = None
    after: Counts | None = None  # the part of ``others`` after the page (None: none)


def check_grouping(group_by: tuple[Dimension, ...], filters: Mapping[Dimension, str]) -> None:
    if len(group_by) > MAX_LEVELS or len(set(group_by)) != len(group_by):
        raise InvalidInput({"group_by": f"up to {MAX_LEVELS} different levels"})
    if any(d in TIME for d in filters):
        raise InvalidInput({"filters": "filter on time with the period, not a filter"})


def build_report(conn: Connection, selection: Selection, *, currency: str) -> Report:
    """Rows keyed by the grouping levels, each with its counts, and the totals."""
    check_grouping(selection.group_by, selection.filters)
    rows: dict[tuple[str, ...], Counts] = {}
    # Clicks have no merchant, event type or status: by those, their counts go to the totals.
    splits_clicks = all(d in TIME or d in CLICK_COLUMNS for d in selection.group_by)
    unsplit = Counts()
    click_selection = selection if splits_clicks else replace(selection, group_by=())
    for grouped, (n, unique, bots) in click_counts(conn, click_selection):
        counts = rows.setdefault(_key(grouped, selection), Counts()) if splits_clicks else unsplit
        counts.clicks += n
        counts.unique_clicks += unique
        counts.bot_clicks += bots
    other_currency = 0
    for grouped, (
        status,
        row_currency,
        is_conversion,
        is_revenue,
        n,
        value,
        held,
    ) in conversion_sums(conn, selection):
        if row_currency != currency:
            other_currency += n
            continue
        counts = rows.setdefault(_key(grouped, selection), Counts())
        _add_conversions(counts, status, bool(is_conversion), bool(is_revenue), n, int(value or 0))
        if is_revenue:
            counts.on_hold += int(held or 0)
    for key, cost in report_costs(
        conn, selection, currency=currency, splits_clicks=splits_clicks
    ).items():
        if key is None:
            unsplit.cost += cost
        elif _is_among(selection, key):  # a day's cost is spread over all its rows
            rows.setdefault(key, Counts()).cost += cost
    totals = unsplit
    for counts in rows.values():
        totals.add(counts)
    names = _names(conn, selection.workspace_id)
    return Report(
        selection=selection,
        currency=currency,
        rows=[
            Row(key, labels_of(selection.group_by, key, names), counts)
            for key, counts in sorted(rows.items())
        ],
        totals=totals,
        other_currency=other_currency,
        from_rollups=uses_rollups(selection),
        names=names,
    )


def _is_among(selection: Selection, key: tuple[str, ...]) -> bool:
    if selection.among is None:
        return True
    dimension, values = selection.among
    return key[selection.group_by.index(dimension)] in values


def _key(grouped: Grouped, selection: Selection) -> tuple[str, ...]:
    slot, values = grouped
    local = (
        datetime.fromtimestamp(slot, UTC).astimezone(selection.period.zone)
        if slot is not None
        else None
    )
    dimension_values = iter(values)
    return tuple(
        time_label(d, local) if local is not None and d in TIME else next(dimension_values)
        for d in selection.group_by
    )


def _add_conversions(
    counts: Counts, status: str, is_conversion: bool, is_revenue: bool, n: int, value: int
) -> None:
    """Revenue types: sales (refunds and chargebacks taken back apart) and pending sales;
    other conversion types: approved ones are leads. Declined ones count nowhere."""
    if not is_revenue:
        if is_conversion and status == "approved":
            counts.leads += n
        return
    if status == "pending":
        counts.pending_sales += n
        counts.pending_revenue += value
    elif status in _COUNTED_SALES:
        counts.sales += n
        counts.approved_revenue += value
        if status == "refunded":
            counts.refunds += n
            counts.refunded += value
        elif status == "chargeback":
            counts.chargebacks += n
            counts.charged_back += value


def _names(conn: Connection, workspace_id: str) -> dict[str, str]:
    names: dict[str, str] = {}
    for table in (campaigns, traffic_sources, merchants):
        query = select(table.c.id, table.c.name).where(table.c.workspace_id == workspace_id)
        names.update((row.id, row.name) for row in conn.execute(query))
    return names


_NAMED = frozenset({Dimension.CAMPAIGN, Dimension.SOURCE, Dimension.MERCHANT})


def labels_of(
    group_by: tuple[Dimension, ...], key: tuple[str, ...], names: Mapping[str, Any]
) -> tuple[str, ...]:
    """What to show for a row's values: names for campaigns, sources and merchants."""
    return tuple(
        names.get(value, value) if d in _NAMED else value
        for d, value in zip(group_by, key, strict=True)
    )
