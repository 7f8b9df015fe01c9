"""A level of many values (sub-ids, ad ids, ...) sorted by clicks is sorted and cut by the
database: only the page's rows are added up. The page, its totals, row count and "others" are
the same as when every row is added up and sorted here (but for a millionth of a real of a
day's cost spread over its clicks, rounded down on a page), whatever the sort, direction and
offset, with ties, rows without a value, a value with sales but no clicks in the period, bots,
orphan sales and costs spread over the day's clicks."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import product
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import httpx
import pytest
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from tests.web.callers import make_owner
from tests.web.sales import postback
from trilha.db.schema import clicks
from trilha.ids import mint_click_id
from trilha.reports import request
from trilha.reports.builder import Report
from trilha.reports.dimensions import Dimension
from trilha.reports.metrics import Counts
from trilha.reports.periods import Preset
from trilha.reports.request import ReportQuery, run_report
from trilha.workspaces import Workspace

PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_{n} like Mac OS X) Mobile/15E148 Safari/604.1"
# sub1 value → people's clicks on it; "" is a click without one
PEOPLE = {"a": 3, "b": 3, "c": 2, "": 2, "d": 1}


async def history(client: httpx.AsyncClient, db: AsyncEngine) -> tuple[Workspace, datetime]:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    ids: dict[str, list[str]] = {}
    visitor = 0
    for sub1, n in PEOPLE.items():
        for _ in range(n):
            visitor += 1
            response = await client.get(
                "/r/lp", params={"sub1": sub1}, headers={"user-agent": PHONE.format(n=visitor)}
            )
            [click_id] = parse_qs(urlsplit(response.headers["location"]).query)["src"]
            ids.setdefault(sub1, []).append(click_id)
    for _ in range(2):  # bots: httpx's own user agent
        assert (await client.get("/r/lp", params={"sub1": "e"})).status_code == 302
    # A click of two days ago whose sale comes today: "z" has a sale and no click today.
    made = datetime.now(UTC) - timedelta(days=2)
    old = mint_click_id(made)
    async with db.begin() as conn:
        await conn.execute(
            clicks.insert(),
            {
                "id": old,
                "campaign_id": campaign.id,
                "created_at": made,
                "ip": "203.0.113.9",
                "user_agent_key": 0,  # no stored agent: read as ""
                "visitor_key": 1,
                "device_type": "mobile",
                "os": "iOS",
                "browser": "Safari",
                "country": "BR",
                "referrer": "",
                "is_bot": False,
                "is_unique": True,
                "sub1": "z",
                "params": "{}",
            },
        )
    await postback(client, workspace, click_id=ids["c"][0], txid="T1", payout="97")
    await postback(
        client, workspace, click_id=ids["a"][0], txid="T2", payout="50", status="pending"
    )
    await postback(client, workspace, click_id=ids["b"][0], txid="T3", payout="30")
    await postback(client, workspace, click_id=ids["b"][0], txid="T3", status="refunded")
    await postback(client, workspace, click_id=old, txid="T4", payout="10")
    await postback(client, workspace, click_id="unknown-click", txid="T5", payout="20")  # orphan
    costs = f"/api/v1/workspaces/{workspace.id}/campaigns/{campaign.id}/costs"
    cpc = await client.put(
        f"{costs}/model", json={"model": "cpc", "amount": "0,50"}, headers=owner.headers
    )
    assert cpc.status_code == 200, cpc.text
    today = datetime.now(ZoneInfo(workspace.timezone)).date().isoformat()
    spent = await client.put(f"{costs}/days/{today}", json={"cost": "12,34"}, headers=owner.headers)
    assert spent.status_code == 200, spent.text  # spread over the day's clicks, bots too
    return workspace, datetime.now(UTC)


def close(ours: Counts | None, theirs: Counts | None, units: int) -> bool:
    """The same counts, the cost within ``units`` cost units: a page's share of a day's spread
    cost is rounded down, its level's others take the remainder."""
    if ours is None or theirs is None:
        return ours is theirs
    return (
        replace(ours, cost=0) == replace(theirs, cost=0) and abs(ours.cost - theirs.cost) <= units
    )


async def test_the_database_cuts_the_same_page_as_sorting_every_row(
    client: httpx.AsyncClient, db: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace, now = await history(client, db)
    asked = [
        ReportQuery(
            Preset.TODAY,
            group_by=(Dimension.SUB1,),
            sort=sort,
            descending=descending,
            limit=limit,
            offset=offset,
        )
        for sort, descending, limit, offset in product(
            (None, "clicks", "unique_clicks", "bot_clicks"), (True, False), (1, 2, 4), (0, 1, 3, 6)
        )
    ]

    def reports(conn: Connection) -> list[Report]:
        return [run_report(conn, workspace, query, now=now) for query in asked]

    async with db.connect() as conn:
        cut = await conn.run_sync(reports)
        monkeypatch.setattr(request, "SQL_PAGES", 0)  # every row added up and sorted here
        whole = await conn.run_sync(reports)

    everything = whole[0]
    assert everything.row_count == 7  # a, b, c, "", d, e and z
    assert everything.totals.cost > 0
    assert everything.totals.sales == 4
    for query, ours, theirs in zip(asked, cut, whole, strict=True):
        assert [row.key for row in ours.rows] == [row.key for row in theirs.rows], query
        for mine, same in zip(ours.rows, theirs.rows, strict=True):
            assert close(mine.counts, same.counts, 1), query
        assert (ours.totals, ours.row_count) == (theirs.totals, theirs.row_count), query
        added = query.offset + len(ours.rows)  # the rows added up, each a unit off at most
        assert close(ours.others, theirs.others, added), query
        assert close(ours.after, theirs.after, added), query
