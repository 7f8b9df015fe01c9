"""The report builder and the home screen in the browser: today's sales by campaign with totals,
sorting, drilling from campaign to source to sub1, filters added by name and removed, the column
picker remembered, the CSV for Excel, a bad link answered with its error, and the home screen's
figures, chart, top campaigns and the orphan signal."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account, screenshot
from tests.dashboard.sales import send_generic
from tests.factories import fetch_all, fetch_clicks, make_campaign, make_source
from trilha.campaigns import Campaign
from trilha.db.schema import memberships
from trilha.workspaces import Workspace

pytestmark = BROWSER

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.{n}"
)


async def visit(db: AsyncEngine, live_server: str, campaign: Campaign, n: int, sub1: str) -> str:
    """A person's click (phone n) on the live redirect; its click id."""
    async with httpx.AsyncClient() as client:
        response = await client.get(
            f"{live_server}/r/{campaign.slug}",
            params={"sub1": sub1},
            headers={"user-agent": IPHONE.format(n=n)},
        )
    assert response.status_code == 302
    rows = await fetch_clicks(db, campaign_id=campaign.id)
    return str(max(rows, key=lambda row: row["created_at"])["id"])


async def two_campaigns(
    db: AsyncEngine, live_server: str, workspace: Workspace
) -> tuple[Campaign, Campaign]:
    """Black Friday (Facebook): 2 clicks, a R$ 97,00 sale on sub1 criativo-a; Perpétuo (Google):
    1 click, a R$ 197,00 sale."""
    facebook = await make_source(db, workspace, name="Facebook")
    google = await make_source(db, workspace, name="Google")
    black_friday = await make_campaign(db, workspace, name="Black Friday", source_id=facebook.id)
    evergreen = await make_campaign(db, workspace, name="Perpétuo", source_id=google.id)
    sold = await visit(db, live_server, black_friday, 1, "criativo-a")
    await visit(db, live_server, black_friday, 2, "criativo-b")
    other = await visit(db, live_server, evergreen, 3, "x")
    await send_generic(live_server, workspace, click_id=sold, txid="T1", payout="97,00")
    await send_generic(live_server, workspace, click_id=other, txid="T2", payout="197,00")
    return black_friday, evergreen


async def test_a_report_is_sorted_drilled_filtered_and_exported(
    page: Page, db: AsyncEngine, owner: Account, live_server: str, tmp_path: Path
) -> None:
    await two_campaigns(db, live_server, owner.workspace)

    await page.goto(f"/w/{owner.workspace.id}/reports?preset=today")
    rows = page.locator("#report .report-row")
    await expect(rows).to_have_count(2)
    # The period by day above the table, its legend on the last day without a pointer over it.
    await expect(page.locator("#report-chart[data-drawn='true'] canvas")).to_have_count(1)
    legend = page.locator("#report-chart .u-legend .u-value")
    await expect(legend).to_have_text([re.compile(r"^\d{2}/\d{2}$"), "3", "2", "R$ 294,00"])
    # Each control of the form has a visible label.
    await expect(page.get_by_label("Nível 1", exact=True)).to_have_value("campaign")
    await expect(page.get_by_label("Nível 2", exact=True)).to_have_value("")
    await expect(page.get_by_label("Período", exact=True)).to_have_value("today")
    await expect(page.get_by_label("Fuso horário", exact=True)).to_be_visible()
    totals = page.locator("#report-totals")
    await expect(totals).to_contain_text("R$ 294,00")
    await expect(totals.locator("th").nth(1)).to_have_text("3")  # clicks

    await page.click("a.sort[data-metric='net_revenue']")
    await expect(rows.first).to_contain_text("Perpétuo")
    await page.click("a.sort[data-metric='net_revenue']")
    await expect(rows.first).to_contain_text("Black Friday")

    await rows.first.locator("a.drill").click()
    await expect(page.locator("#report-filters")).to_contain_text("Campanha: Black Friday")
    await expect(page.locator("#level-1")).to_have_value("source")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("Facebook")
    await rows.first.locator("a.drill").click()
    await expect(page.locator("#level-1")).to_have_value("sub1")
    await expect(rows).to_have_count(2)
    await expect(page.locator("#report-filters .filter-chip")).to_have_count(2)

    await page.locator(".filter-chip", has_text="Campanha").locator(".remove-filter").click()
    await expect(page.locator("#report-filters .filter-chip")).to_have_count(1)
    await expect(rows).to_have_count(2)  # Facebook's sub1s: criativo-a and criativo-b

    await page.goto(f"/w/{owner.workspace.id}/reports?preset=today")
    await page.select_option("#filter-dimension", "campaign")
    await page.fill("#filter-value", "perpétuo")
    await page.click("#report-submit")
    await expect(page.locator("#report-filters")).to_contain_text("Campanha: Perpétuo")
    await expect(rows).to_have_count(1)

    await page.click("#column-picker summary")
    await page.uncheck("input[name='column'][value='unique_clicks']")
    await page.check("input[name='column'][value='epuc']")
    await page.click("#save-columns")
    await expect(page.locator("#flash")).to_have_text("Colunas salvas.")
    await expect(page.locator("a.sort[data-metric='epuc']")).to_be_visible()
    await expect(page.locator("a.sort[data-metric='unique_clicks']")).to_have_count(0)
    await expect(rows).to_have_count(1)  # the filter survived the save
    [membership] = await fetch_all(db, memberships, user_id=owner.user.id)
    assert "epuc" in membership["report_columns"]
    assert "unique_clicks" not in membership["report_columns"]

    async with page.expect_download() as download_info:
        await page.click("#report-csv")
    download = await download_info.value
    path = tmp_path / "report.csv"
    await download.save_as(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("\ufeffCampanha;Cliques;")
    assert "EPUC" in text.splitlines()[0]
    assert "Cliques únicos" not in text
    assert "Perpétuo;1;" in text
    assert "197,00" in text
    assert "Black Friday" not in text  # filtered out


async def test_a_bad_report_link_shows_what_is_wrong(page: Page, owner: Account) -> None:
    response = await page.goto(f"/w/{owner.workspace.id}/reports?group_by=nope&sort=bogus")
    assert response is not None
    assert response.status == 422
    errors = page.locator("#report-errors")
    await expect(errors).to_contain_text("não é um nível")
    await expect(errors).to_contain_text("não é uma métrica")


async def test_the_home_screen_shows_today_the_chart_top_campaigns_and_orphans(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    await two_campaigns(db, live_server, owner.workspace)
    for n in range(3):  # sales whose click the offer URL lost
        answer = await send_generic(
            live_server, owner.workspace, click_id=f"lost{n}", txid=f"O{n}", payout="10"
        )
        assert answer["status"] == "orphan", answer

    await page.goto("/")
    await expect(page).to_have_url(f"{live_server}/w/{owner.workspace.id}")
    clicks_today = page.locator(".figure[data-metric='clicks']")
    await expect(clicks_today.locator(".today")).to_have_text("3")
    await expect(clicks_today.locator(".yesterday")).to_have_text("ontem: 0")
    revenue = page.locator(".figure[data-metric='net_revenue'] .today")
    await expect(revenue).to_have_text("R$ 324,00")  # orphan sales are sales too
    await expect(page.locator("#home-chart[data-drawn='true'] canvas")).to_have_count(1)
    await expect(page.locator("#home-chart .u-legend")).to_contain_text("Vendas")
    # Without a pointer over the chart (as on a phone), its legend shows the last day: today.
    values = page.locator("#home-chart .u-legend .u-value")
    await expect(values).to_have_text([re.compile(r"^\d{2}/\d{2}$"), "3", "5", "R$ 324,00"])
    await expect(page.locator("#outcomes")).to_contain_text("Órfão: 3")
    signal = page.locator(".signal[data-signal='orphans']")
    await expect(signal).to_contain_text("60%")  # 3 of the 5 postbacks
    await expect(signal).to_contain_text("perdeu o click id")

    orphans = page.locator("#top-campaigns tr.orphan-row")
    await expect(orphans.locator("td").first).to_have_text("Sem campanha (órfãs)")
    await expect(orphans.locator("td").nth(2)).to_have_text("3")  # sales
    await expect(orphans.locator("a.orphans")).to_have_attribute(
        "href", f"/w/{owner.workspace.id}/conversions?orphan=yes"
    )
    top = page.locator("#top-campaigns tbody tr:not(.orphan-row)")
    await expect(top).to_have_count(2)
    await expect(top.first).to_contain_text("Perpétuo")
    await top.first.locator("a.drill").click()
    await expect(page.locator("#report-filters")).to_contain_text("Campanha: Perpétuo")
    await expect(page.locator("#level-1")).to_have_value("source")
    await expect(page.locator("#report .report-row")).to_contain_text("Google")


async def test_orphan_sales_are_a_row_of_their_own_and_leave_the_rates_per_click_alone(
    page: Page, db: AsyncEngine, owner: Account, live_server: str, tmp_path: Path
) -> None:
    await two_campaigns(db, live_server, owner.workspace)  # 3 clicks, 2 sales
    await send_generic(live_server, owner.workspace, click_id="lost", txid="O1", payout="10")

    await page.goto(f"/w/{owner.workspace.id}/reports?preset=today")
    orphans = page.locator("#report tr.orphan-row")
    await expect(orphans.locator("td").first).to_have_text("Sem campanha (órfãs)")
    await expect(page.locator("#report .report-row")).to_have_count(3)
    totals = page.locator("#report-totals th")
    sales, cr = [
        await page.locator(f"#report thead th:has(a.sort[data-metric='{name}'])").evaluate(
            "th => th.cellIndex"
        )
        for name in ("sales", "cr")
    ]
    await expect(totals.nth(sales)).to_have_text("3")  # the orphan sale is a sale
    await expect(totals.nth(cr)).to_have_text("66,67%")  # 2 sales of the 3 clicks, not 3 of 3
    await expect(page.locator("#orphan-note")).to_contain_text("1 venda sem campanha (órfã)")
    await screenshot(page, "report-orphans-pt-BR.png", tmp_path)

    await orphans.locator("a.orphans").click()
    await expect(page).to_have_url(f"{live_server}/w/{owner.workspace.id}/conversions?orphan=yes")
    await expect(page.locator("#filter-orphan")).to_have_value("yes")


async def test_the_campaign_list_shows_each_campaign_s_day(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    black_friday, _ = await two_campaigns(db, live_server, owner.workspace)
    idle = await make_campaign(db, owner.workspace, name="Parada")

    await page.goto(f"/w/{owner.workspace.id}/campaigns")
    figures = page.locator(f"#campaign-{black_friday.id} td.today")
    await expect(figures).to_have_text(["2", "1", "R$ 97,00"])  # clicks, sales, profit (no cost)
    await expect(page.locator(f"#campaign-{idle.id} td.today")).to_have_text(["0", "0", "R$ 0,00"])
    await page.click(f"#campaign-{black_friday.id} .toggle-status")  # the row htmx swaps in
    await expect(page.locator(f"#campaign-{black_friday.id} .badge")).to_have_text("Pausada")
    await expect(figures).to_have_text(["2", "1", "R$ 97,00"])


async def test_a_levels_rows_open_in_place_and_a_long_level_comes_a_page_at_a_time(
    page: Page, db: AsyncEngine, owner: Account, live_server: str, tmp_path: Path
) -> None:
    black_friday, _ = await two_campaigns(db, live_server, owner.workspace)
    for n, sub1 in enumerate(("criativo-c", "criativo-d", "criativo-e"), start=4):
        await visit(db, live_server, black_friday, n, sub1)

    await page.goto(f"/w/{owner.workspace.id}/reports?preset=today&group_by=campaign&group_by=sub1")
    rows = page.locator("#report tbody tr")
    await expect(rows).to_have_count(2)  # the campaigns alone, until one is opened
    await page.locator("#report tr", has_text="Black Friday").locator("button.expand").click()
    await expect(page.locator("#report tr.level-1")).to_have_count(5)
    await expect(page.locator("#report tr.level-1").first).to_contain_text("criativo-a")
    assert await page.locator("#report tr").nth(2).get_attribute("data-depth") == "1"
    await page.screenshot(path=tmp_path / "report-opened.png", full_page=True)

    await page.goto(f"/w/{owner.workspace.id}/reports?preset=today&group_by=sub1&limit=2")
    await expect(page.locator("#report tr.report-row")).to_have_count(2)
    others = page.locator("#report tr.report-others")
    await expect(others).to_contain_text("Outras (4 linhas)")
    await others.locator("a.more").click()
    await expect(page.locator("#report tr.report-row")).to_have_count(4)
    await expect(page.locator("#report tr.report-others")).to_contain_text("Outras (2 linhas)")
    await page.locator("#report tr.report-others a.more").click()
    await expect(page.locator("#report tr.report-row")).to_have_count(6)
    await expect(page.locator("#report tr.report-others")).to_have_count(0)
