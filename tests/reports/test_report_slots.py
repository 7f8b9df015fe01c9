"""The database groups a report's times into the report's own buckets: a report by day reads
one row per local day (and dimension values), not one per click or per quarter hour, when the
zone's offset holds over the period."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign, make_workspace
from trilha.db.schema import clicks
from trilha.ids import mint_click_id
from trilha.reports.dimensions import Dimension
from trilha.reports.periods import Period
from trilha.reports.query import Selection, click_counts, constant_offset

SAO_PAULO = ZoneInfo("America/Sao_Paulo")
NEW_YORK = ZoneInfo("America/New_York")


async def test_a_report_by_day_reads_one_row_a_day(db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace)
    # 40 clicks from 00:00:07 to 23:24:07 of one São Paulo day, each in a second of its own.
    start = datetime(2026, 11, 3, 0, 0, 7, tzinfo=SAO_PAULO).astimezone(UTC)
    rows = [
        {
            "id": mint_click_id(start + timedelta(minutes=36 * i)),
            "campaign_id": campaign.id,
            "created_at": start + timedelta(minutes=36 * i),
            "ip": "203.0.113.9",
            "user_agent_key": 0,  # no stored agent: read as ""
            "visitor_key": i,
            "device_type": "mobile",
            "os": "os",
            "browser": "browser",
            "country": "BR",
            "referrer": "",
            "is_bot": False,
            "is_unique": True,
            "sub2": "ad 7",  # a filter the hourly sums cannot answer: the click rows are read
            "params": "{}",
        }
        for i in range(40)
    ]
    async with db.begin() as conn:
        await conn.execute(clicks.insert(), rows)
        selection = Selection(
            workspace.id,
            Period(date(2026, 11, 2), date(2026, 11, 4), SAO_PAULO),
            (Dimension.DAY,),
            {Dimension.SUB2: "ad 7"},
        )
        read = await conn.run_sync(lambda sync: list(click_counts(sync, selection)))

    day = int(datetime(2026, 11, 3, tzinfo=SAO_PAULO).timestamp())
    assert read == [((day, ()), [40, 40, 0])]


def test_the_offset_holds_unless_summer_time_changes_within() -> None:
    assert constant_offset(Period(date(2026, 3, 1), date(2026, 3, 31), SAO_PAULO)) == -3 * 3600
    assert constant_offset(Period(date(2026, 3, 1), date(2026, 3, 7), NEW_YORK)) == -5 * 3600
    # New York's clocks go forward on 2026-03-08: the last day's end is already at -04:00.
    assert constant_offset(Period(date(2026, 3, 1), date(2026, 3, 8), NEW_YORK)) is None
    assert constant_offset(Period(date(2026, 3, 9), date(2026, 3, 9), NEW_YORK)) == -4 * 3600
