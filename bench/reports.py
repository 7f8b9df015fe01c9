"""Benchmark of the common reports over months of clicks, beside a plain count of the same clicks.

Run from the repository root (docs/performance.md says how to read it):

    .venv/bin/python bench/reports.py [--clicks 5000000] [--conversions 100000] [--days 90]
                                      [--targets sqlite,postgres] [--rounds 5] [--url URL]

Each target gets a fresh, migrated database (a SQLite file in a temporary directory; a
PostgreSQL database created from ``--postgres-url`` and dropped afterwards) filled with one
workspace, eight campaigns on three traffic sources, ``--clicks`` clicks over the last ``--days``
days (traffic grows over the days and follows the hours of the day; 60 sub1 values; 6 % bots)
and ``--conversions`` conversions on random clicks (sales, leads and upsells, some pending, some
refunded). Rows go in directly, then ``rebuild_rollups`` adds them up, as the migration does.
``--url`` measures a database filled beforehand instead (by ``bench/prefill.py``, say, then
``trilha rollups rebuild``), its oldest workspace. ``--costs`` then gives the campaigns cost models
(CPC, CPUC, CPA, RevShare, CPM with impressions, manual days) and measures again.

Timed, each the median of ``--rounds`` runs, in the workspace's time zone:

- ``count``: ``SELECT count(*)`` of the workspace's clicks of the last 30 days (the baseline);
- ``by campaign``, ``by day``: the last 30 days' report at one level;
- ``drilldown``: campaign → source → sub1 over the last 30 days;
- ``home``: the home screen, as ``trilha.reports.home.home`` reads it: today by campaign,
  yesterday in total, the last 30 days by day and the postback health of the last 8 days.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

from sqlalchemy import Connection, Engine, create_engine, func, select

from bench.harness import postgres_database
from trilha.db.engine import sync_url
from trilha.db.migrate import migrate
from trilha.db.schema import (
    campaigns,
    click_sub1_days,
    clicks,
    clicks_made,
    conversions,
    cost_days,
    cost_models,
    event_types,
    traffic_sources,
    user_agents,
    workspace_clicks,
    workspaces,
)
from trilha.event_types import BUILTIN
from trilha.ids import mint_click_id, new_id
from trilha.reports.dimensions import Dimension
from trilha.reports.home import home
from trilha.reports.periods import Preset, resolve_period
from trilha.reports.request import ReportQuery, run_report
from trilha.reports.rollups import rebuild_rollups
from trilha.visitors import agent_key
from trilha.workspaces import Workspace

CHUNK = 20_000
ZONE = ZoneInfo("America/Sao_Paulo")
REPORTS: dict[str, tuple[Dimension, ...]] = {
    "by campaign": (Dimension.CAMPAIGN,),
    "by day": (Dimension.DAY,),
}
DRILLDOWN = (Dimension.CAMPAIGN, Dimension.SOURCE, Dimension.SUB1)


def fill(engine: Engine, *, clicks_wanted: int, conversions_wanted: int, days: int) -> str:
    """A workspace with its campaigns, clicks and conversions; its id."""
    rng = random.Random(1)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        workspace_id, targets = _workspace(conn, now)
        agents = zip(AGENT_KEYS, AGENTS, strict=True)
        conn.execute(user_agents.insert(), [{"key": k, "agent": a} for k, a in agents])
    # Traffic grows over the days and follows the hours: more in the evening, little at night.
    day_weights = [1 + d / days for d in range(days)]
    hour_weights = [0.3 + math.sin(math.pi * max(0, h - 6) / 18) for h in range(24)]
    chosen = set(rng.sample(range(clicks_wanted), min(conversions_wanted, clicks_wanted)))
    sold: list[dict[str, Any]] = []
    started = time.perf_counter()
    for first in range(0, clicks_wanted, CHUNK):
        rows = []
        for n in range(first, min(first + CHUNK, clicks_wanted)):
            day = rng.choices(range(days), day_weights)[0]
            hour = rng.choices(range(24), hour_weights)[0]
            at = now - timedelta(days=days - day, hours=hour, seconds=rng.randrange(3600))
            campaign_id, source_id = targets[min(int(rng.expovariate(0.4)), len(targets) - 1)]
            row = _click(rng, campaign_id, source_id, at)
            rows.append(row)
            if n in chosen:
                sold.append(row)
        with engine.begin() as conn:
            conn.execute(clicks.insert(), rows)
        print(f"\r  {first + len(rows):,} clicks", end="", file=sys.stderr, flush=True)
    print(f" in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    with engine.begin() as conn:
        for first in range(0, len(sold), CHUNK):
            conn.execute(
                conversions.insert(),
                [_conversion(rng, workspace_id, row) for row in sold[first : first + CHUNK]],
            )
        rebuild_rollups(conn)
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    return workspace_id


def _workspace(conn: Connection, now: datetime) -> tuple[str, list[tuple[str, str | None]]]:
    workspace_id = new_id()
    conn.execute(
        workspaces.insert().values(
            id=workspace_id, name="Bench", postback_token=new_id(), created_at=now
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
                "created_at": now,
            }
            for name, (c, r) in BUILTIN.items()
        ],
    )
    sources = [new_id() for _ in range(3)]
    conn.execute(
        traffic_sources.insert(),
        [
            {
                "id": s,
                "workspace_id": workspace_id,
                "name": f"S{n}",
                "params": [],
                "created_at": now,
            }
            for n, s in enumerate(sources)
        ],
    )
    targets: list[tuple[str, str | None]] = []
    for n in range(8):
        campaign_id = new_id()
        source_id = sources[n % 3] if n < 7 else None
        conn.execute(
            campaigns.insert().values(
                id=campaign_id,
                workspace_id=workspace_id,
                name=f"Campaign {n}",
                slug=campaign_id,
                offer_url="https://offer.example/?src={click_id}",
                source_id=source_id,
                created_at=now,
                updated_at=now,
            )
        )
        targets.append((campaign_id, source_id))
    return workspace_id, targets


AGENTS = ("Mozilla/5.0 (Linux; Android 14) Chrome/126 Mobile", "bot")  # a person's, a bot's
AGENT_KEYS = tuple(agent_key(agent) for agent in AGENTS)


def _click(
    rng: random.Random, campaign_id: str, source_id: str | None, at: datetime
) -> dict[str, Any]:
    is_bot = rng.random() < 0.06
    return {
        "id": mint_click_id(at),
        "campaign_id": campaign_id,
        "source_id": source_id,
        "created_at": at,
        "ip": f"200.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}",
        "user_agent_key": AGENT_KEYS[is_bot],
        "visitor_key": rng.getrandbits(63),  # a signed BIGINT, as trilha.visitors makes it
        "device_type": "bot" if is_bot else "mobile",
        "os": "Android",
        "browser": "Chrome",
        "country": "BR",
        "referrer": "",
        "is_bot": is_bot,
        "is_unique": rng.random() < 0.7,
        "sub1": f"ad{int(rng.expovariate(0.08)) % 60}",
        "utm_source": "fb",
        "params": {},
    }


def _conversion(rng: random.Random, workspace_id: str, click: dict[str, Any]) -> dict[str, Any]:
    event_type = rng.choices(["SALE", "LEAD", "UPSELL"], [6, 3, 1])[0]
    status = rng.choices(["approved", "pending", "refunded", "declined"], [75, 12, 8, 5])[0]
    at = click["created_at"] + timedelta(minutes=rng.randrange(1, 240))
    return {
        "id": new_id(),
        "workspace_id": workspace_id,
        "click_id": click["id"],
        "raw_click_id": click["id"],
        "campaign_id": click["campaign_id"],
        "source_id": click["source_id"],
        "event_type": event_type,
        "status": status,
        "value_minor": (value := rng.choice([4700, 9700, 19700, 49700])),
        "currency": "BRL",
        "report_value_minor": value,
        "report_currency": "BRL",
        "rate": "1",
        "rate_source": "same",
        "txid": new_id(),
        "dedupe_key": f"tx:{new_id()}",
        "created_at": at,
        "status_changed_at": at,
    }


COST_MODELS: tuple[
    tuple[str, int, list[str]], ...
] = (  # per campaign, in order: (model, rate in cost units, event types)
    ("cpc", 350_000, []),
    ("cpc", 500_000, []),
    ("cpuc", 450_000, []),
    ("cpa", 25_000_000, ["SALE"]),
    ("revshare", 3000, []),
    ("cpm", 12_500_000, []),
    ("manual", 0, []),
    ("cpc", 200_000, []),
)


def add_costs(engine: Engine, workspace_id: str, *, days: int) -> None:
    """A cost model for each campaign from the first day, impressions for the CPM one and a
    cost entered for each day of the manual one (and every third day of the first)."""
    today = datetime.now(ZONE).date()
    first = today - timedelta(days=days)
    with engine.begin() as conn:
        ids = [r.id for r in conn.execute(select(campaigns.c.id).order_by(campaigns.c.name))]
        for campaign_id, (model, rate, types) in zip(ids, COST_MODELS, strict=False):
            conn.execute(
                cost_models.insert().values(
                    id=new_id(),
                    workspace_id=workspace_id,
                    campaign_id=campaign_id,
                    starts_on=first,
                    model=model,
                    currency="BRL",
                    rate=rate,
                    event_types=types,
                    created_at=datetime.now(UTC),
                )
            )
        entered = [
            {
                "campaign_id": ids[n],
                "day": first + timedelta(days=d),
                "source_id": "",
                "workspace_id": workspace_id,
                "currency": "BRL",
                "cost": 150_000_000 if n != 5 else None,
                "impressions": 40_000 if n == 5 else None,
                "updated_at": datetime.now(UTC),
            }
            for d in range(days + 1)
            for n in (0, 5, 6)
            if n != 0 or d % 3 == 0
        ]
        conn.execute(cost_days.insert(), entered)


def measure(engine: Engine, workspace_id: str, rounds: int) -> dict[str, tuple[float, int]]:
    """Median milliseconds and rows answered, per report."""
    now = datetime.now(UTC)
    month = resolve_period(Preset.LAST_30_DAYS, ZONE, now)

    def count(conn: Connection) -> int:
        query = select(func.count()).where(
            workspace_clicks(workspace_id), *clicks_made(month.start, None)
        )
        return int(conn.execute(query).scalar_one())

    with engine.connect() as conn:
        row = conn.execute(select(workspaces).where(workspaces.c.id == workspace_id)).one()
    workspace = Workspace(**{f: getattr(row, f) for f in Workspace.__dataclass_fields__})

    def page(levels: tuple[Dimension, ...], parent: tuple[str, ...] = ()) -> ReportQuery:
        return ReportQuery(Preset.LAST_30_DAYS, timezone=ZONE.key, group_by=levels, parent=parent)

    def report(query: ReportQuery) -> Callable[[Connection], int]:
        return lambda conn: len(run_report(conn, workspace, query, now=now).rows)

    def home_screen(conn: Connection) -> int:
        screen = home(conn, workspace, now=now)
        return len(screen.today.rows) + len(screen.days.rows) + len(screen.health.outcomes)

    # The drilldown as the dashboard opens it: the first page of each level under the top row
    # of the one above.
    parent: tuple[str, ...] = ()
    drilldown: dict[str, Callable[[Connection], int]] = {}
    with engine.connect() as conn:
        for depth in range(len(DRILLDOWN)):
            query = page(DRILLDOWN, parent)
            drilldown[f"drilldown {depth + 1}"] = report(query)
            rows = run_report(conn, workspace, query, now=now).rows
            parent = rows[0].key if rows else (*parent, "")
    with engine.connect() as conn:  # the campaign and source with the most sub1 values
        days = click_sub1_days.c
        widest = conn.execute(
            select(days.campaign_id, days.source_id)
            .where(days.workspace_id == workspace_id)
            .group_by(days.campaign_id, days.source_id)
            .order_by(func.count().desc())
            .limit(1)
        ).one_or_none()
    if widest is not None:
        drilldown["drilldown 3, widest"] = report(page(DRILLDOWN, tuple(widest)))

        def values(conn: Connection) -> int:
            """The floor of the widest level: its sub1 values grouped by the database alone
            from the daily sums, with nothing else read."""
            query = (
                select(days.sub1, func.sum(days.clicks))
                .where(
                    days.workspace_id == workspace_id,
                    days.campaign_id == widest.campaign_id,
                    days.source_id == widest.source_id,
                    days.day >= int(month.start.timestamp()) // 86400,
                )
                .group_by(days.sub1)
            )
            return len(conn.execute(query).all())

        drilldown["sub1 values (floor)"] = values
    work = {
        "count": count,
        **{n: report(page(levels)) for n, levels in REPORTS.items()},
        **drilldown,
        "home": home_screen,
    }
    return {name: _median(engine, fn, rounds) for name, fn in work.items()}


def _median(engine: Engine, fn: Callable[[Connection], int], rounds: int) -> tuple[float, int]:
    times, answered = [], 0
    with engine.connect() as conn:
        for _ in range(rounds):
            started = time.perf_counter()
            answered = fn(conn)
            times.append((time.perf_counter() - started) * 1000)
            conn.rollback()
    return statistics.median(times), answered


@contextmanager
def database(target: str, postgres_url: str) -> Iterator[str]:
    if target == "postgres":
        with postgres_database(postgres_url) as url:
            yield url
        return
    with tempfile.TemporaryDirectory() as directory:
        yield f"sqlite+aiosqlite:///{Path(directory) / 'trilha.db'}"


def oldest_workspace(engine: Engine) -> str:
    with engine.connect() as conn:
        query = select(workspaces.c.id).order_by(workspaces.c.created_at).limit(1)
        return str(conn.execute(query).scalar_one())


def run_target(url: str, args: argparse.Namespace, *, prefilled: bool) -> None:
    migrate(url)
    engine = create_engine(sync_url(url))
    try:
        if prefilled:
            workspace_id = oldest_workspace(engine)
        else:
            workspace_id = fill(
                engine,
                clicks_wanted=args.clicks,
                conversions_wanted=args.conversions,
                days=args.days,
            )
        for name, (ms, answered) in measure(engine, workspace_id, args.rounds).items():
            print(f"  {name:<20} {ms:9.1f} ms  {answered:>6} rows")
        if args.costs:
            add_costs(engine, workspace_id, days=args.days)
            print("  with costs:")
            for name, (ms, answered) in measure(engine, workspace_id, args.rounds).items():
                print(f"  {name:<20} {ms:9.1f} ms  {answered:>6} rows")
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clicks", type=int, default=5_000_000)
    parser.add_argument("--conversions", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--targets", default="sqlite,postgres")
    parser.add_argument("--postgres-url", default="postgresql+psycopg://postgres@127.0.0.1/test")
    parser.add_argument("--url", help="measure this database, filled beforehand")
    parser.add_argument("--costs", action="store_true", help="measure again with cost models")
    args = parser.parse_args()
    if args.url:
        print(args.url.split("://")[0])
        run_target(args.url, args, prefilled=True)
        return
    for target in args.targets.split(","):
        print(
            f"{target}: {args.clicks:,} clicks, {args.conversions:,} conversions, {args.days} days"
        )
        with database(target, args.postgres_url) as url:
            run_target(url, args, prefilled=False)


if __name__ == "__main__":
    main()
