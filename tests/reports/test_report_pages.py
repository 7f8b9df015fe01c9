"""Every level of a report is bounded: its top rows by the sort, a page at a time, with the
level's row count and an "others" row that carries the rest, so that rows and others add up to
the totals. The CSV export writes every level at once, cut the same way."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from tests.web.callers import make_owner
from trilha.i18n import translator
from trilha.reports.dimensions import Dimension
from trilha.reports.export import report_csv, shown_report_csv
from trilha.reports.periods import Preset
from trilha.reports.request import ReportQuery, run_report
from trilha.workspaces import Workspace

# sub1 value → clicks on it
CLICKS = {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}


async def clicks_by_sub1(client: httpx.AsyncClient, db: AsyncEngine) -> tuple[Any, Workspace]:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="lp")
    for sub1, n in CLICKS.items():
        for _ in range(n):
            assert (await client.get(f"/r/lp?sub1={sub1}")).status_code == 302
    return owner, workspace


async def test_a_level_answers_a_page_of_its_top_rows_with_the_rest_in_others(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await clicks_by_sub1(client, db)
    url = f"/api/v1/workspaces/{workspace.id}/reports"
    base = {"preset": "today", "group_by": "sub1", "limit": "2"}

    first = (await client.get(url, params=base, headers=owner.headers)).json()
    second = (await client.get(url, params={**base, "offset": "2"}, headers=owner.headers)).json()
    fewest = (
        await client.get(
            url, params={**base, "sort": "clicks", "order": "asc"}, headers=owner.headers
        )
    ).json()
    everything = (
        await client.get(url, params={**base, "limit": "10"}, headers=owner.headers)
    ).json()

    assert [(r["key"], r["metrics"]["clicks"]) for r in first["rows"]] == [(["a"], 5), (["b"], 4)]
    assert (first["row_count"], first["others"]["clicks"], first["totals"]["clicks"]) == (5, 6, 15)
    assert [r["key"] for r in second["rows"]] == [["c"], ["d"]]
    assert second["others"]["clicks"] == 5 + 4 + 1  # before the page and after it
    assert [r["key"] for r in fewest["rows"]] == [["e"], ["d"]]
    assert (everything["row_count"], everything["others"]) == (5, None)


async def test_a_page_larger_than_the_limit_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    url = f"/api/v1/workspaces/{workspace.id}/reports"

    answers = [
        await client.get(url, params=params, headers=owner.headers)
        for params in (
            {"limit": "1001"},
            {"limit": "0"},
            {"offset": "-1"},
            {"group_by": "campaign", "parent": "x"},
            {"group_by": ["day", "campaign"], "parent": "not-a-day"},
        )
    ]

    assert [a.status_code for a in answers] == [422] * 5


async def test_the_csv_export_writes_every_level_cut_with_the_rest_in_one_row(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await clicks_by_sub1(client, db)
    query = ReportQuery(
        preset=Preset.TODAY,
        group_by=(Dimension.CAMPAIGN, Dimension.SUB1),
        flat=True,
        limit=3,
    )

    async with db.connect() as conn:
        report = await conn.run_sync(run_report, workspace, query, now=datetime.now(UTC))
    lines = report_csv(report, ["clicks"]).lstrip("\ufeff").splitlines()

    assert [line.split(";")[1:] for line in lines] == [
        ["sub1", "clicks"],
        ["a", "5"],
        ["b", "4"],
        ["c", "3"],
        ["", "3"],
        ["", "15"],
    ]
    assert lines[4].startswith("others (2 rows);")


async def test_the_dashboards_csv_names_the_rest_and_the_totals_in_the_readers_language(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await clicks_by_sub1(client, db)
    query = ReportQuery(
        preset=Preset.TODAY,
        group_by=(Dimension.CAMPAIGN, Dimension.SUB1),
        flat=True,
        limit=3,
    )

    async with db.connect() as conn:
        report = await conn.run_sync(run_report, workspace, query, now=datetime.now(UTC))
    portuguese = shown_report_csv(report, ["clicks"], translator("pt-BR")).splitlines()
    english = shown_report_csv(report, ["clicks"], translator("en")).splitlines()

    assert portuguese[0] == "\ufeffCampanha;sub1;Cliques"
    assert (portuguese[4], portuguese[5]) == ("Outras (2 linhas);;3", "Total;;15")
    assert (english[4], english[5]) == ("Others (2 rows);;3", "Total;;15")
