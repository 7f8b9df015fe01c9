"""Generated histories of clicks and conversions: report totals and rows equal sums computed
here from the history itself, and the hourly sums equal the click rows, on both databases.

Clicks go through the click writer's own ``record_clicks`` (so the hourly sums are kept as in
production); conversions are put in place with their current status, as the postback path
leaves them. `TRILHA_HYPOTHESIS_PROFILE=full` tries many more histories.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP as HALF_UP
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from currency_converter import CurrencyConverter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, Engine, Table, create_engine, select

from trilha.clicks import ClickRequest, record_clicks
from trilha.costs.models import CostModelKind
from trilha.currencies import convert, converted_columns
from trilha.db.engine import sync_url
from trilha.db.schema import (
    campaigns,
    click_hours,
    click_sub1_days,
    click_sub1_hours,
    conversions,
    cost_days,
    cost_models,
    event_types,
    traffic_sources,
    workspaces,
)
from trilha.event_types import BUILTIN
from trilha.hold import Hold
from trilha.ids import new_id
from trilha.links import Link
from trilha.reports.builder import build_report
from trilha.reports.dimensions import Dimension, time_label
from trilha.reports.periods import Period
from trilha.reports.query import Selection
from trilha.reports.rollups import rebuild_rollups
from trilha.visitors import Device, Visitor

ECB = CurrencyConverter(fallback_on_missing_rate=True, fallback_on_wrong_date=True)
EXAMPLES = 600 if os.environ.get("TRILHA_HYPOTHESIS_PROFILE") == "full" else 25
# Around São Paulo's midnight, New York's DST change (2026-03-08) and a +05:30 zone.
START = datetime(2026, 3, 6, 0, 0, tzinfo=UTC)
ZONES = ("America/Sao_Paulo", "America/New_York", "Asia/Kolkata", "UTC")
GROUPINGS = (
    (),
    (Dimension.DAY,),
    (Dimension.HOUR, Dimension.CAMPAIGN),
    (Dimension.CAMPAIGN, Dimension.SOURCE, Dimension.SUB1),
    (Dimension.WEEK, Dimension.COUNTRY),
    (Dimension.STATUS,),
)
STATUSES = ("approved", "pending", "declined", "refunded", "chargeback")
COST_DAY0 = date(2026, 3, 3)


@dataclass(frozen=True)
class ClickPlan:
    campaign: int
    sub1: str
    minutes: int
    is_bot: bool
    country: str
    cost: str | None  # the click URL's ?cost=


@dataclass(frozen=True)
class ConversionPlan:
    click: int
    event_type: str
    status: str
    value: int
    minutes_later: int
    currency: str
    status_minutes_later: int  # its status changed this long after it was recorded


@dataclass(frozen=True)
class ModelPlan:
    campaign: int
    starts: int  # days after COST_DAY0
    model: CostModelKind
    rate: int
    counts_bots: bool
    event_types: tuple[str, ...]


@dataclass(frozen=True)
class DayPlan:
    campaign: int
    day: int  # days after COST_DAY0
    by_source: bool
    cost: int | None
    impressions: int | None


model_plans = st.builds(
    ModelPlan,
    campaign=st.integers(0, 2),
    starts=st.integers(0, 6),
    model=st.sampled_from(list(CostModelKind)),
    rate=st.integers(0, 3000).map(lambda n: n * 1000),  # a CPM's rate prices whole units
    counts_bots=st.booleans(),
    event_types=st.sampled_from([("SALE",), ("LEAD", "UPSELL")]),
)
day_plans = st.builds(
    DayPlan,
    campaign=st.integers(0, 2),
    day=st.integers(0, 8),
    by_source=st.booleans(),
    cost=st.none() | st.integers(0, 10**9),
    impressions=st.none() | st.integers(0, 10**6),
)
click_plans = st.builds(
    ClickPlan,
    campaign=st.integers(0, 2),
    sub1=st.sampled_from(["", "a", "b"]),
    minutes=st.integers(0, 4 * 24 * 60),
    is_bot=st.booleans(),
    country=st.sampled_from(["BR", "PT"]),
    cost=st.sampled_from([None, "0.05", "1,5", "0.0000125", "bad", "2000"]),
)
conversion_plans = st.builds(
    ConversionPlan,
    click=st.integers(0, 1000),
    event_type=st.sampled_from(["SALE", "LEAD", "UPSELL"]),
    status=st.sampled_from(STATUSES),
    value=st.integers(0, 100_000),
    minutes_later=st.integers(0, 3 * 60),
    currency=st.sampled_from(["BRL", "BRL", "USD", "ARS"]),  # no rate for ARS: left out
    status_minutes_later=st.integers(0, 3 * 24 * 60),
)


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = create_engine(sync_url(database_url))
    yield engine
    engine.dispose()


def make_workspace(conn: Connection) -> tuple[str, list[Link]]:
    """A workspace with three campaigns, the first two on one traffic source."""
    workspace_id, source_id = new_id(), new_id()
    conn.execute(
        workspaces.insert().values(
            id=workspace_id, name="W", postback_token=new_id(), created_at=START
        )
    )
    conn.execute(
        traffic_sources.insert().values(
            id=source_id, workspace_id=workspace_id, name="S", params=[], created_at=START
        )
    )
    conn.execute(
        event_types.insert(),
        [
            {
                "id": new_id(),
                "workspace_id": workspace_id,
                "name": name,
                "counts_as_conversion": c,
                "counts_as_revenue": r,
                "is_builtin": True,
                "created_at": START,
            }
            for name, (c, r) in BUILTIN.items()
        ],
    )
    links = []
    for n in range(3):
        campaign_id = new_id()
        source = source_id if n < 2 else None
        conn.execute(
            campaigns.insert().values(
                id=campaign_id,
                workspace_id=workspace_id,
                name=f"C{n}",
                slug=campaign_id,
                offer_url="https://offer.example/",
                source_id=source,
                created_at=START,
                updated_at=START,
            )
        )
        links.append(
            Link(campaign_id, workspace_id, f"C{n}", campaign_id, "", source, "", (), "UTC")
        )
    return workspace_id, links


def record(conn: Connection, links: list[Link], plans: list[ClickPlan]) -> list[dict[str, Any]]:
    """The clicks, in batches of up to five, as the click writer records them."""
    batch = [
        (
            links[p.campaign],
            ClickRequest(
                host="",
                slug=links[p.campaign].slug,
                visitor=Visitor(
                    ip=f"198.51.100.{n % 7}",
                    user_agent="UA",
                    referrer="",
                    device=Device("mobile", "iOS", "Safari", p.is_bot),
                    country=p.country,
                ),
                params={
                    **({"sub1": p.sub1} if p.sub1 else {}),
                    **({"cost": p.cost} if p.cost is not None else {}),
                },
                now=START + timedelta(minutes=p.minutes),
            ),
        )
        for n, p in enumerate(plans)
    ]
    rows: list[dict[str, Any]] = []
    for first in range(0, len(batch), 5):
        rows += record_clicks(conn, batch[first : first + 5])
    return rows


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    click_plan=st.lists(click_plans, max_size=30),
    conversion_plan=st.lists(conversion_plans, max_size=12),
    zone_name=st.sampled_from(ZONES),
    grouping=st.sampled_from(GROUPINGS),
    first_day=st.integers(0, 3),
    days=st.integers(1, 3),
    by_click_time=st.booleans(),
    hold_hours=st.integers(0, 5 * 24),
    model_plan=st.lists(model_plans, max_size=5),
    day_plan=st.lists(day_plans, max_size=6),
)
def test_reports_equal_the_sums_of_the_history(
    engine: Engine,
    click_plan: list[ClickPlan],
    conversion_plan: list[ConversionPlan],
    zone_name: str,
    grouping: tuple[Dimension, ...],
    first_day: int,
    days: int,
    by_click_time: bool,
    hold_hours: int,
    model_plan: list[ModelPlan],
    day_plan: list[DayPlan],
) -> None:
    zone = ZoneInfo(zone_name)
    hold = Hold(since=START + timedelta(days=6) - timedelta(hours=hold_hours))
    first = date(2026, 3, 5) + timedelta(days=first_day)
    period = Period(first, first + timedelta(days=days - 1), zone)
    with engine.begin() as conn:
        workspace_id, links = make_workspace(conn)
        rows = record(conn, links, click_plan)
        sales = place_conversions(conn, workspace_id, rows, conversion_plan)
        plan = place_costs(conn, workspace_id, links, model_plan, day_plan)
        selection = Selection(workspace_id, period, grouping, {}, by_click_time, hold)
        report = build_report(conn, selection, currency="BRL")

    expected_clicks: Counter[tuple[str, ...]] = Counter()
    for row in rows:
        if period.start <= row["created_at"] < period.end and Dimension.STATUS not in grouping:
            expected_clicks[key_of(row, grouping, zone)] += 1
    assert {r.key: r.counts.clicks for r in report.rows if r.counts.clicks} == expected_clicks
    assert report.totals.clicks == sum(
        period.start <= row["created_at"] < period.end for row in rows
    )
    assert report.totals.bot_clicks == sum(
        bool(row["is_bot"]) for row in rows if period.start <= row["created_at"] < period.end
    )
    counted = [
        s
        for s in sales
        if period.start <= (s["click_at"] if by_click_time else s["created_at"]) < period.end
    ]
    converted = [s for s in counted if s["report_currency"] == "BRL"]
    revenue = [s for s in converted if s["event_type"] != "LEAD"]
    approved = [s for s in revenue if s["status"] in ("approved", "refunded", "chargeback")]
    assert report.totals.sales == len(approved)
    assert report.totals.approved_revenue == sum(s["report_value_minor"] for s in approved)
    assert report.totals.refunded == sum(
        s["report_value_minor"] for s in revenue if s["status"] == "refunded"
    )
    assert report.totals.pending_sales == sum(s["status"] == "pending" for s in revenue)
    assert report.totals.on_hold == sum(
        s["report_value_minor"]
        for s in revenue
        if s["status"] == "approved" and s["status_changed_at"] > hold.since
    )
    assert report.totals.leads == sum(
        s["event_type"] == "LEAD" and s["status"] == "approved" for s in converted
    )
    assert report.other_currency == sum(s["currency"] == "ARS" for s in counted)
    for s in converted:  # at the ECB's rate of its day (10 places), which the test reads itself
        rate = 1 if s["currency"] == "BRL" else ECB.convert(1, "USD", "BRL", s["created_at"].date())
        exact = Decimal(s["value_minor"]) * Decimal(str(rate)).quantize(Decimal("1e-10"), HALF_UP)
        assert s["report_value_minor"] == exact.quantize(Decimal(1), HALF_UP)

    # Filtered on each value of a level, the parts add up to the whole: a day's spread cost is
    # shared over all its clicks, whichever the filter keeps.
    with engine.connect() as conn:
        for level, values in (
            (Dimension.SUB1, ("", "a", "b")),
            (Dimension.CAMPAIGN, tuple(link.campaign_id for link in links)),
        ):
            parts = [
                build_report(
                    conn,
                    Selection(workspace_id, period, grouping, {level: v}, by_click_time),
                    currency="BRL",
                ).totals.cost
                for v in values
            ]
            assert sum(parts) == report.totals.cost, (level, parts)

    events = [(r, r["created_at"]) for r in rows if period.start <= r["created_at"] < period.end]
    events += [(s, s["click_at"] if by_click_time else s["created_at"]) for s in counted]
    expected_costs = expected_cost_by_campaign_day(plan, events, period)
    assert report.totals.cost == sum(expected_costs.values())
    for level, part in ((Dimension.CAMPAIGN, 0), (Dimension.DAY, 1), (Dimension.HOUR, 1)):
        if level in grouping:
            at = grouping.index(level)
            found: Counter[str] = Counter()
            for r in report.rows:
                found[r.key[at][:10] if level is Dimension.HOUR else r.key[at]] += r.counts.cost
            wanted: Counter[str] = Counter()
            for key, cost in expected_costs.items():
                wanted[str(key[part])] += cost
            assert +found == +wanted


def key_of(row: dict[str, Any], grouping: tuple[Dimension, ...], zone: ZoneInfo) -> tuple[str, ...]:
    local = row["created_at"].astimezone(zone)
    columns = {
        Dimension.CAMPAIGN: "campaign_id",
        Dimension.SOURCE: "source_id",
        Dimension.SUB1: "sub1",
        Dimension.COUNTRY: "country",
    }
    return tuple(
        time_label(d, local)
        if d in columns.keys() ^ set(Dimension) and d is not Dimension.STATUS
        else str(row.get(columns[d]) or "")
        for d in grouping
    )


def place_conversions(
    conn: Connection,
    workspace_id: str,
    rows: list[dict[str, Any]],
    plans: list[ConversionPlan],
) -> list[dict[str, Any]]:
    if not rows:
        return []
    placed = []
    for n, plan in enumerate(plans):
        row = rows[plan.click % len(rows)]
        created_at = row["created_at"] + timedelta(minutes=plan.minutes_later)
        conversion = {
            "id": new_id(),
            "workspace_id": workspace_id,
            "click_id": row["id"],
            "raw_click_id": row["id"],
            "campaign_id": row["campaign_id"],
            "source_id": row.get("source_id"),
            "event_type": plan.event_type,
            "status": plan.status,
            "value_minor": plan.value,
            "currency": plan.currency,
            "dedupe_key": f"tx:{n}",
            "created_at": created_at,
            "status_changed_at": created_at + timedelta(minutes=plan.status_minutes_later),
            **converted_columns(
                convert(conn, workspace_id, plan.value, plan.currency, "BRL", created_at.date())
            ),
        }
        conn.execute(conversions.insert().values(**conversion))
        placed.append({**conversion, "click_at": row["created_at"]})
    return placed


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(click_plan=st.lists(click_plans, max_size=40))
def test_the_hourly_sums_equal_the_click_rows_and_their_rebuild(
    engine: Engine, click_plan: list[ClickPlan]
) -> None:
    with engine.begin() as conn:
        workspace_id, links = make_workspace(conn)
        rows = record(conn, links, click_plan)
        kept = hourly_sums(conn, workspace_id)
        rebuild_rollups(conn, workspace_id=workspace_id)
        rebuilt = hourly_sums(conn, workspace_id)

    expected: Counter[tuple[object, ...]] = Counter()
    for row in rows:
        hour = int(row["created_at"].timestamp()) // 3600
        key = (hour, row["campaign_id"], row.get("source_id") or "", row.get("sub1") or "")
        expected[(*key, "clicks")] += 1
        expected[(*key, "unique")] += bool(row["is_unique"])
        expected[(*key, "bots")] += bool(row["is_bot"])
    assert kept == rebuilt == +expected


def hourly_sums(conn: Connection, workspace_id: str) -> Counter[tuple[object, ...]]:
    """The finest rollup's counts, the coarser ones checked against its sums."""
    fine: Counter[tuple[object, ...]] = Counter()
    coarse: Counter[tuple[object, ...]] = Counter()
    daily: Counter[tuple[object, ...]] = Counter()
    for r in rollup_rows(conn, click_sub1_hours, workspace_id):
        *key, name, value = r
        fine[(*key, name)] += value
        coarse[(key[0], key[1], key[2], name)] += value
        daily[(key[0] // 24, *key[1:], name)] += value
    stored = Counter(
        {(*key, name): value for *key, name, value in rollup_rows(conn, click_hours, workspace_id)}
    )
    days = Counter(
        {
            (*key, name): value
            for *key, name, value in rollup_rows(conn, click_sub1_days, workspace_id)
        }
    )
    assert +stored == +coarse
    assert +days == +daily
    return +fine


def rollup_rows(conn: Connection, table: Table, workspace_id: str) -> Iterator[tuple[Any, ...]]:
    """(time, campaign, source[, sub1], count name, count) for each count of each row."""
    for r in conn.execute(select(table).where(table.c.workspace_id == workspace_id)):
        key = tuple(r)[1:-3]
        for name, value in (
            ("clicks", r.clicks),
            ("unique", r.unique_clicks),
            ("bots", r.bot_clicks),
        ):
            yield (*key, name, value)


@dataclass
class CostSetup:
    """The cost models and day entries placed, as the test reads them."""

    campaigns: list[str]
    source_id: str
    models: dict[str, list[tuple[date, ModelPlan]]]
    entered: dict[tuple[str, date], dict[str, int]]
    impressions: dict[tuple[str, date], dict[str, int]]


def place_costs(
    conn: Connection,
    workspace_id: str,
    links: list[Link],
    model_plan: list[ModelPlan],
    day_plan: list[DayPlan],
) -> CostSetup:
    source_id = str(links[0].source_id)
    setup = CostSetup([link.campaign_id for link in links], source_id, {}, {}, {})
    versions = {(p.campaign, p.starts): p for p in model_plan}  # one version a day
    for (campaign, starts), p in sorted(versions.items()):
        campaign_id, starts_on = setup.campaigns[campaign], COST_DAY0 + timedelta(days=starts)
        conn.execute(
            cost_models.insert().values(
                id=new_id(),
                workspace_id=workspace_id,
                campaign_id=campaign_id,
                starts_on=starts_on,
                model=p.model.value,
                currency="BRL",
                rate=p.rate,
                counts_bots=p.counts_bots,
                event_types=list(p.event_types),
                created_at=START,
            )
        )
        setup.models.setdefault(campaign_id, []).append((starts_on, p))
    entries = {(e.campaign, e.day, e.by_source): e for e in day_plan}
    for (campaign, day, by_source), entry in entries.items():
        if entry.cost is None and entry.impressions is None:
            continue
        campaign_id, when = setup.campaigns[campaign], COST_DAY0 + timedelta(days=day)
        source = source_id if by_source else ""
        conn.execute(
            cost_days.insert().values(
                campaign_id=campaign_id,
                day=when,
                source_id=source,
                workspace_id=workspace_id,
                currency="BRL",
                cost=entry.cost,
                impressions=entry.impressions,
                updated_at=START,
            )
        )
        if entry.cost is not None:
            setup.entered.setdefault((campaign_id, when), {})[source] = entry.cost
        if entry.impressions is not None:
            setup.impressions.setdefault((campaign_id, when), {})[source] = entry.impressions
    return setup


def expected_cost_by_campaign_day(
    setup: CostSetup, events: list[tuple[dict[str, Any], datetime]], period: Period
) -> Counter[tuple[str, str]]:
    """Each campaign's cost per local day, computed from the history as docs/costs.md says:
    costs entered replace the estimate (of the day, or of one source's clicks and sales)."""
    costs: Counter[tuple[str, str]] = Counter()
    day = period.first
    while day <= period.last:
        for campaign_id in setup.campaigns:
            on_day = [
                e
                for e, moment in events
                if e["campaign_id"] == campaign_id and moment.astimezone(period.zone).date() == day
            ]
            costs[(campaign_id, day.isoformat())] += day_cost(setup, campaign_id, day, on_day)
        day += timedelta(days=1)
    return costs


def day_cost(setup: CostSetup, campaign_id: str, day: date, events: list[dict[str, Any]]) -> int:
    entered = setup.entered.get((campaign_id, day), {})
    total = sum(entered.values())
    in_force = [p for starts_on, p in setup.models.get(campaign_id, []) if starts_on <= day]
    if "" in entered or not in_force:
        return total
    p = in_force[-1]
    left = [e for e in events if (e.get("source_id") or "") not in entered]
    clicks = [e for e in left if "is_bot" in e]
    sales = [e for e in left if "event_type" in e]
    if p.model is CostModelKind.CLICK_URL:
        total += sum(e.get("cost") or 0 for e in clicks)
    elif p.model is CostModelKind.CPC:
        total += p.rate * sum(p.counts_bots or not e["is_bot"] for e in clicks)
    elif p.model is CostModelKind.CPUC:
        total += p.rate * sum(bool(e["is_unique"]) for e in clicks)
    elif p.model is CostModelKind.CPM:
        shown = setup.impressions.get((campaign_id, day), {})
        total += sum(n * p.rate // 1000 for source, n in shown.items() if source not in entered)
    elif p.model is CostModelKind.CPA:
        total += p.rate * sum(
            e["event_type"] in p.event_types
            and e["status"] in ("approved", "refunded", "chargeback")
            for e in sales
        )
    elif p.model is CostModelKind.REVSHARE:
        total += sum(
            e["value_minor"] * p.rate
            for e in sales
            if e["event_type"] != "LEAD" and e["status"] == "approved" and e["currency"] == "BRL"
        )
    return total
