"""A workspace with enough clicks that a report over them takes a while: rows inserted by the
database itself, from a generated series, in one statement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from trilha.campaigns import Campaign
from trilha.db.schema import clicks
from trilha.workspaces import Workspace

# Grouped by these, the report reads every click and adds up thousands of groups.
HEAVY_LEVELS = {"group_by": ["os", "device"], "preset": "last_7_days"}

SERIES = {
    "sqlite": "WITH RECURSIVE series(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM series "
    "WHERE i + 1 < :count) SELECT i, printf('%026d', i) AS id FROM series",
    "postgresql": "SELECT i, lpad(i::text, 26, '0') AS id FROM generate_series(0, :count - 1) i",
}


async def add_clicks(db: AsyncEngine, workspace: Workspace, count: int) -> Campaign:
    """``count`` clicks of the last hour on a new campaign of the workspace."""
    campaign = await make_campaign(db, workspace)
    insert = text(
        "INSERT INTO clicks (id, workspace_id, campaign_id, created_at, ip, user_agent,"  # noqa: S608 -- SERIES holds constants
        " visitor_key, device_type, os, browser, country, referrer, is_bot, is_unique, sub2,"
        " params) SELECT series.id, :workspace, :campaign, :at, '203.0.113.9', 'ua', series.i,"
        " 'mobile', 'os' || (series.i % 7), 'browser', 'BR', '', false, true,"
        " 'sub' || (series.i % 5000), '{}'"
        f" FROM ({SERIES[db.dialect.name]}) series"
    ).bindparams(bindparam("at", type_=clicks.c.created_at.type))
    async with db.begin() as conn:
        await conn.execute(
            insert,
            {
                "count": count,
                "workspace": workspace.id,
                "campaign": campaign.id,
                "at": datetime.now(UTC) - timedelta(hours=1),
            },
        )
    return campaign
