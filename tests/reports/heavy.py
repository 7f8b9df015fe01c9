"""A workspace with enough clicks that a report over them takes a while: rows inserted by the
database itself, from a generated series, in one statement."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import bindparam, text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from trilha.campaigns import Campaign
from trilha.db.schema import clicks
from trilha.ids import click_ids_from
from trilha.workspaces import Workspace

# Grouped by these, the report reads every click and adds up thousands of groups.
HEAVY_LEVELS = {"group_by": ["os", "device"], "preset": "last_7_days"}

SERIES = {
    "sqlite": "WITH RECURSIVE series(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM series "
    "WHERE i + 1 < :count) SELECT i, :made || printf('%014d', i) AS id FROM series",
    "postgresql": "SELECT i, :made || lpad(i::text, 14, '0') AS id"
    " FROM generate_series(0, :count - 1) i",
}


async def add_clicks(db: AsyncEngine, workspace: Workspace, count: int) -> Campaign:
    """``count`` clicks of the last hour on a new campaign of the workspace."""
    campaign = await make_campaign(db, workspace)
    insert = text(
        "INSERT INTO clicks (id, campaign_id, created_at, ip, user_agent_key,"  # noqa: S608 -- SERIES holds constants
        " visitor_key, device_type, os, browser, country, referrer, is_bot, is_unique, sub2,"
        " params) SELECT series.id, :campaign, :at, '203.0.113.9', 0, series.i,"
        " 'mobile', 'os' || (series.i % 7), 'browser', 'BR', '', false, true,"
        " 'sub' || (series.i % 5000), '{}'"
        f" FROM ({SERIES[db.dialect.name]}) series"
    ).bindparams(bindparam("at", type_=clicks.c.created_at.type))
    at = datetime.now(UTC) - timedelta(hours=1)
    async with db.begin() as conn:
        # Each id begins with its click's time, as trilha.ids.mint_click_id makes them.
        parameters = {"count": count, "campaign": campaign.id, "at": at, "made": click_ids_from(at)}
        await conn.execute(insert, parameters)
    return campaign
