"""The cost in a report's rows: each campaign's cost per local day of the report's time zone,
from the cost model in force that day, or from the cost entered for that day, which replaces it.

Per-click models (cpc, cpuc, click_url) cost each row its own clicks, and per-conversion ones
(cpa, revshare) its own conversions. A day's cost entered by hand, or priced from impressions
(cpm), belongs to no click: it is spread over the campaign's clicks of that day (of that source,
for a source's entry) in proportion to their number, the way commercial trackers spread a cost
update over the visits of its range; a day without clicks keeps its cost in a row of its own
that has only its time, campaign and source ("" at the other levels).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, select

from trilha.costs.models import CostModel, CostModelKind, cost_model_of, model_on
from trilha.costs.units import PER_THOUSAND, revenue_share
from trilha.db.schema import cost_days, cost_models
from trilha.reports.dimensions import CLICK_COLUMNS, TIME, Dimension, time_label
from trilha.reports.periods import Period, local_midnight
from trilha.reports.query import (
    Grouped,
    Selection,
    click_cost_sums,
    click_counts,
    conversion_sums,
)

Key = tuple[str, ...] | None  # a report row's key; None: the totals only (clicks are not split)
PER_CLICK = frozenset({CostModelKind.CPC, CostModelKind.CPUC, CostModelKind.CLICK_URL})
PER_CONVERSION = frozenset({CostModelKind.CPA, CostModelKind.REVSHARE})
_WAS_APPROVED = frozenset({"approved", "refunded", "chargeback"})
_CAMPAIGN_SOURCE = (Dimension.CAMPAIGN, Dimension.SOURCE)


@dataclass(slots=True)
class Plan:
    """The cost models and day entries a report reads, in the report's currency."""

    history: dict[str, list[CostModel]] = field(default_factory=dict)
    entered: dict[tuple[str, date], dict[str, int]] = field(default_factory=dict)
    impressions: dict[tuple[str, date], dict[str, int]] = field(default_factory=dict)

    def models_in_use(self) -> set[CostModelKind]:
        return {version.model for versions in self.history.values() for version in versions}


@dataclass(frozen=True, slots=True)
class Cell:
    """A campaign's clicks that fall in one report row, on one day or a run of days."""

    key: Key
    matches: bool  # whether the row passes the report's filters
    source: str
    clicks: int
    unique_clicks: int
    bot_clicks: int
    cost: int = 0  # what the clicks' URLs said they cost


def report_costs(
    conn: Connection, selection: Selection, *, currency: str, splits_clicks: bool
) -> dict[Key, int]:
    """Cost units per report row key (None: the totals only, when clicks are not split)."""
    plan = load_plan(conn, selection, currency)
    costs: dict[Key, int] = defaultdict(int)
    if _clicks_matter(plan, selection):
        named = {*plan.history, *(c for c, _ in plan.entered), *(c for c, _ in plan.impressions)}
        for campaign in sorted(named):
            for key, cost in _click_costs(conn, plan, selection, splits_clicks, campaign):
                costs[key] += cost
    if plan.models_in_use() & PER_CONVERSION:
        for key, cost in _conversion_costs(conn, plan, selection, currency):
            costs[key] += cost
    return costs


def load_plan(conn: Connection, selection: Selection, currency: str) -> Plan:
    period, plan = selection.period, Plan()
    m, d = cost_models.c, cost_days.c
    models = select(cost_models).where(
        m.workspace_id == selection.workspace_id, m.starts_on <= period.last
    )
    days = select(cost_days).where(
        d.workspace_id == selection.workspace_id, d.day >= period.first, d.day <= period.last
    )
    campaign = selection.filters.get(Dimension.CAMPAIGN)
    if campaign is not None:
        models, days = (
            models.where(m.campaign_id == campaign),
            days.where(d.campaign_id == campaign),
        )
    for row in conn.execute(models.order_by(m.campaign_id, m.starts_on)):
        if row.currency == currency:
            plan.history.setdefault(row.campaign_id, []).append(cost_model_of(row))
    for row in conn.execute(days):
        if row.currency != currency:
            continue
        if row.cost is not None:
            plan.entered.setdefault((row.campaign_id, row.day), {})[row.source_id] = row.cost
        if row.impressions is not None:
            plan.impressions.setdefault((row.campaign_id, row.day), {})[row.source_id] = (
                row.impressions
            )
    return plan


def _clicks_matter(plan: Plan, selection: Selection) -> bool:
    """Whether any cost lands on clicks; a filter on what clicks lack (merchant, event type,
    status) leaves no click in the report, and so no cost of clicks either."""
    if any(d not in CLICK_COLUMNS for d in selection.filters):
        return False
    return bool(plan.entered or plan.impressions or plan.models_in_use() & PER_CLICK)


def _click_costs(
    conn: Connection, plan: Plan, selection: Selection, splits_clicks: bool, campaign: str
) -> Iterator[tuple[Key, int]]:
    """A campaign's costs of clicks: the days with a cost entered or impressions one by one
    (their cost is spread over the day's clicks); the others in runs of days under one
    per-click model, each run read at the report's own levels, so that a month under one CPC
    reads no more rows than the report itself."""
    history = plan.history.get(campaign, [])
    runs: list[tuple[CostModel, date, date]] = []
    day, period = selection.period.first, selection.period
    spread: list[date] = []
    while day <= period.last:
        if (campaign, day) in plan.entered or (campaign, day) in plan.impressions:
            spread.append(day)
        else:
            version = model_on(history, day)
            if version is not None and version.model in PER_CLICK:
                if runs and runs[-1][0] is version and runs[-1][2] == day - timedelta(days=1):
                    runs[-1] = (version, runs[-1][1], day)
                else:
                    runs.append((version, day, day))
        day += timedelta(days=1)
    if spread:
        cells = _day_cells(conn, selection, splits_clicks, campaign, spread, history)
        sums = None if selection.among is None else _day_sums(conn, selection, campaign, spread)
        for day in spread:
            on_day = None if sums is None else sums.get(day, {})
            yield from _day_costs(plan, selection, campaign, day, cells.get(day, []), on_day)
    for version, first, last in runs:
        yield from _run_costs(conn, selection, splits_clicks, version, first, last)


def _run_costs(
    conn: Connection,
    selection: Selection,
    splits_clicks: bool,
    version: CostModel,
    first: date,
    last: date,
) -> Iterator[tuple[Key, int]]:
    run = replace(
        selection,
        period=Period(first, last, selection.period.zone),
        group_by=selection.group_by if splits_clicks else (),
        filters={**selection.filters, Dimension.CAMPAIGN: version.campaign_id},
    )
    levels = run.dimensions
    if version.model is CostModelKind.CLICK_URL:
        for grouped, cost in click_cost_sums(conn, run, [version.campaign_id]):
            yield _cell(run, splits_clicks, levels, grouped).key, cost
        return
    for grouped, (n, unique, bots) in click_counts(conn, run):
        cell = replace(_cell(run, splits_clicks, levels, grouped), clicks=n)
        cell = replace(cell, unique_clicks=unique, bot_clicks=bots)
        yield cell.key, _cell_cost(version, cell)


def _day_cells(
    conn: Connection,
    selection: Selection,
    splits_clicks: bool,
    campaign: str,
    days: Sequence[date],
    history: Sequence[CostModel],
) -> dict[date, list[Cell]]:
    """A campaign's clicks of some days by day, source and report row, and by the values of
    the filtered dimensions, filtered here: a day's spread cost needs all its clicks (on a
    page of top rows, the page's, with _day_sums). One read from the first day to the last,
    whatever their number."""
    levels = selection.dimensions if splits_clicks else ()
    extra = tuple(dict.fromkeys((*levels, *selection.filters, Dimension.SOURCE)))
    times = tuple(d for d in selection.group_by if d in TIME) if splits_clicks else ()
    zone, wanted = selection.period.zone, set(days)
    wide = replace(
        selection,
        period=Period(min(days), max(days), zone),
        group_by=(*(times or (Dimension.DAY,)), *extra),
        filters={Dimension.CAMPAIGN: campaign},
    )
    cells: dict[date, list[Cell]] = {}
    for grouped, (n, unique, bots) in click_counts(conn, wide):
        if (day := _local(grouped[0] or 0, zone).date()) in wanted:
            cell = _cell(selection, splits_clicks, extra, grouped)
            cell = replace(cell, clicks=n, unique_clicks=unique, bot_clicks=bots)
            cells.setdefault(day, []).append(cell)
    if any(v.model is CostModelKind.CLICK_URL for v in history):
        for grouped, cost in click_cost_sums(conn, wide, [campaign]):
            if (day := _local(grouped[0] or 0, zone).date()) in wanted:
                cell = replace(_cell(selection, splits_clicks, extra, grouped), cost=cost)
                cells.setdefault(day, []).append(cell)
    return cells


def _day_sums(
    conn: Connection, selection: Selection, campaign: str, days: Sequence[date]
) -> dict[date, dict[str, int]]:
    """A campaign's clicks of some days by day and source, rows on a page or not: what a
    page's rows share a day's spread cost with."""
    zone, wanted = selection.period.zone, set(days)
    wide = replace(
        selection,
        period=Period(min(days), max(days), zone),
        group_by=(Dimension.DAY, Dimension.SOURCE),
        filters={Dimension.CAMPAIGN: campaign},
        among=None,
    )
    sums: dict[date, dict[str, int]] = {}
    for (slot, (source,)), (n, _, _) in click_counts(conn, wide):
        if (day := _local(slot or 0, zone).date()) in wanted:
            sums.setdefault(day, {})[source] = n
    return sums


def _cell(
    selection: Selection, splits_clicks: bool, extra: tuple[Dimension, ...], grouped: Grouped
) -> Cell:
    slot, values = grouped
    named = dict(zip(extra, values, strict=True))
    local = None if slot is None else _local(slot, selection.period.zone)
    return Cell(
        key=_report_key(selection, local, named) if splits_clicks else None,
        matches=_matches(selection, named),
        source=named.get(Dimension.SOURCE, ""),
        clicks=0,
        unique_clicks=0,
        bot_clicks=0,
    )


@lru_cache(maxsize=4096)
def _local(slot: int, zone: ZoneInfo) -> datetime:
    return datetime.fromtimestamp(slot, UTC).astimezone(zone)


def _report_key(
    selection: Selection, local: datetime | None, named: Mapping[Dimension, str]
) -> Key:
    return tuple(
        time_label(d, local) if d in TIME and local is not None else named.get(d, "")
        for d in selection.group_by
    )


def _matches(selection: Selection, named: Mapping[Dimension, str]) -> bool:
    return all(named.get(d, "") == value for d, value in selection.filters.items())


def _day_costs(
    plan: Plan,
    selection: Selection,
    campaign: str,
    day: date,
    cells: Sequence[Cell],
    sums: Mapping[str, int] | None,
) -> Iterator[tuple[Key, int]]:
    """A campaign's costs on one day: entered costs replace the estimate (of the whole day, or
    of one source's clicks); the model's estimate covers the rest. ``sums``: the day's clicks
    by source when ``cells`` are a page's only (None: they are all the day's)."""
    entered = plan.entered.get((campaign, day), {})
    spread = _Spread(selection, campaign, day, sums)
    for source, cost in entered.items():
        targets = [c for c in cells if source in ("", c.source)]

        def named(s: str, source: str = source) -> bool:
            return source in ("", s)

        yield from spread(cost, targets, source, named)
    version = model_on(plan.history.get(campaign, []), day)
    if "" in entered or version is None:
        return
    left = [c for c in cells if c.source not in entered]
    if version.model in PER_CLICK:
        for cell in left:
            if cell.matches:
                yield cell.key, _cell_cost(version, cell)
    elif version.model is CostModelKind.CPM:
        for source, shown in plan.impressions.get((campaign, day), {}).items():
            if source not in entered:
                targets = [c for c in left if source in ("", c.source)]
                cost = shown * version.rate // PER_THOUSAND

                def among(s: str, source: str = source) -> bool:
                    return s not in entered and source in ("", s)

                yield from spread(cost, targets, source, among)


def _cell_cost(version: CostModel, cell: Cell) -> int:
    if version.model is CostModelKind.CLICK_URL:
        return cell.cost
    if version.model is CostModelKind.CPUC:
        return version.rate * cell.unique_clicks
    return version.rate * (cell.clicks if version.counts_bots else cell.clicks - cell.bot_clicks)


@dataclass(frozen=True, slots=True)
class _Spread:
    """Spreads a day's cost over its clicks (see __call__)."""

    selection: Selection
    campaign: str
    day: date
    sums: Mapping[str, int] | None  # the day's clicks by source, when the cells are a page's

    def __call__(
        self, cost: int, cells: Sequence[Cell], source: str, sharing: Callable[[str], bool]
    ) -> Iterator[tuple[Key, int]]:
        """``cost`` over ``cells`` in proportion to their clicks, whole units that add up to
        it exactly (largest remainder); no clicks: one row of the day, campaign and source.
        The cells of a page get their share of the clicks of every source ``sharing`` names
        (rounded down: the rest of the level, in its "others", takes the remainder)."""
        selection = self.selection
        if self.sums is None:
            total = sum(c.clicks for c in cells)
        else:
            total = sum(n for s, n in self.sums.items() if sharing(s))
        if total == 0:
            local = local_midnight(self.day, selection.period.zone).astimezone(
                selection.period.zone
            )
            named = {Dimension.CAMPAIGN: self.campaign, Dimension.SOURCE: source}
            if _matches(selection, named) and _is_among(selection, named):
                splits = all(d in TIME or d in CLICK_COLUMNS for d in selection.group_by)
                yield (
                    (_report_key(selection, local, named | _blanks(selection)) if splits else None),
                    cost,
                )
            return
        if self.sums is None:
            parts = shares(cost, [c.clicks for c in cells])
        else:
            parts = [cost * c.clicks // total for c in cells]
        for cell, share in zip(cells, parts, strict=True):
            if cell.matches and share:
                yield cell.key, share


def _is_among(selection: Selection, named: Mapping[Dimension, str]) -> bool:
    if selection.among is None:
        return True
    dimension, values = selection.among
    return named.get(dimension, "") in values


def _blanks(selection: Selection) -> dict[Dimension, str]:
    return {d: "" for d in selection.group_by if d not in _CAMPAIGN_SOURCE}


def shares(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` split in proportion to ``weights``, in whole units that add up to it.

    >>> shares(100, [1, 1, 1]), shares(5, [3, 1]), shares(7, [0, 2])
    ([34, 33, 33], [4, 1], [0, 7])
    """
    whole = sum(weights)
    parts = [total * w // whole for w in weights]
    remainders = sorted(range(len(weights)), key=lambda i: (-(total * weights[i] % whole), i))
    for i in remainders[: total - sum(parts)]:
        parts[i] += 1
    return parts


def _conversion_costs(
    conn: Connection, plan: Plan, selection: Selection, currency: str
) -> Iterator[tuple[Key, int]]:
    """CPA and revshare costs, in the rows of the conversions they are paid for: read in runs
    of days under one version, at the report's levels; a day with a cost entered for one
    source is a run of its own, that source's conversions left out."""
    levels = tuple(dict.fromkeys((*selection.group_by, *_CAMPAIGN_SOURCE, Dimension.EVENT_TYPE)))
    for campaign, history in sorted(plan.history.items()):
        if not any(v.model in PER_CONVERSION for v in history):
            continue
        for version, first, last, entered in _conversion_runs(plan, selection, campaign):
            run = replace(
                selection,
                period=Period(first, last, selection.period.zone),
                group_by=levels,
                filters={**selection.filters, Dimension.CAMPAIGN: campaign},
            )
            for grouped, sums in conversion_sums(conn, run):
                cost = _conversion_cost(selection, run, currency, version, entered, grouped, sums)
                if cost is not None:
                    yield cost


Run = tuple[CostModel, date, date, Mapping[str, int]]


def _conversion_runs(plan: Plan, selection: Selection, campaign: str) -> list[Run]:
    history, runs = plan.history[campaign], list[Run]()
    day, period = selection.period.first, selection.period
    while day <= period.last:
        version = model_on(history, day)
        entered = plan.entered.get((campaign, day), {})
        if version is not None and version.model in PER_CONVERSION and "" not in entered:
            last = runs[-1] if runs else None
            follows = last is not None and last[2] == day - timedelta(days=1)
            if last and follows and not entered and not last[3] and last[0] is version:
                runs[-1] = (version, last[1], day, entered)
            else:
                runs.append((version, day, day, entered))
        day += timedelta(days=1)
    return runs


def _conversion_cost(
    selection: Selection,
    run: Selection,
    currency: str,
    version: CostModel,
    entered: Mapping[str, int],
    grouped: Grouped,
    sums: Sequence[Any],
) -> tuple[Key, int] | None:
    slot, values = grouped
    named = dict(zip(run.dimensions, values, strict=True))
    if named[Dimension.SOURCE] in entered:
        return None
    status, row_currency, _, is_revenue, n, value, _ = sums  # the last: the part on hold
    key = _report_key(selection, None if slot is None else _local(slot, run.period.zone), named)
    if version.model is CostModelKind.CPA:
        is_paid = named[Dimension.EVENT_TYPE] in version.event_types and status in _WAS_APPROVED
        return (key, version.rate * int(n)) if is_paid else None
    is_shared = version.model is CostModelKind.REVSHARE and is_revenue and status == "approved"
    is_shared = is_shared and row_currency == currency
    return (key, revenue_share(int(value or 0), version.rate)) if is_shared else None
