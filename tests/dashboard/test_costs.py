"""A campaign's cost in the browser: the model set, a day entered and deleted, a CSV import
refused line by line and then taken whole, in Portuguese and in English."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.test_small_screens import PHONE, WIDEST
from tests.factories import fetch_all, make_campaign, make_source
from trilha.db.schema import cost_days, cost_models

pytestmark = BROWSER


async def test_the_model_is_set_days_entered_deleted_and_imported(
    page: Page, db: AsyncEngine, owner: Account, tmp_path: Path
) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    campaign = await make_campaign(db, owner.workspace, name="Black Friday")
    await make_source(db, owner.workspace, name="Meta")
    today = datetime.now(ZoneInfo("America/Sao_Paulo")).date().isoformat()
    shown = datetime.now(ZoneInfo("America/Sao_Paulo")).date().strftime("%d/%m/%Y")
    await page.goto(f"/w/{owner.workspace.id}/campaigns/{campaign.id}")
    await page.click("#campaign-costs")
    await expect(page.locator("h2")).to_have_text("Custo")
    await expect(page.locator("#current-model")).to_contain_text("Ainda sem modelo")

    await page.select_option("#field-model", "cpa")
    await page.fill("#field-amount", "25,00")
    await page.uncheck("#event-type-SALE")
    await page.click("#cost-model-submit")
    await expect(page.locator("#error-event_types")).to_contain_text("CPA")
    await page.check("#event-type-SALE")
    await page.click("#cost-model-submit")
    await expect(page.locator("#flash")).to_contain_text("Modelo de custo salvo")
    await expect(page.locator("#current-model")).to_contain_text("CPA: por conversão")
    [model] = await fetch_all(db, cost_models, campaign_id=campaign.id)
    assert (model["model"], model["rate"], model["event_types"]) == ("cpa", 25_000_000, ["SALE"])

    await page.fill("#field-cost", "abc")
    await page.click("#cost-day-submit")
    await expect(page.locator("#error-cost")).to_have_text("'abc' não é um valor")
    await page.fill("#field-cost", "1.234,56")
    await page.click("#cost-day-submit")
    await expect(page.locator("#flash")).to_contain_text(f"Dia {shown} salvo")
    await expect(page.locator(f"#cost-day-{today}")).to_contain_text(shown)
    await expect(page.locator(f"#cost-day-{today}")).to_contain_text("1.234,56")
    await page.locator(f"#cost-day-{today} .delete-cost-day").click()
    await expect(page.locator("#flash")).to_contain_text(f"Dia {shown} apagado")
    assert await fetch_all(db, cost_days) == []

    bad = tmp_path / "bad.csv"
    bad.write_text("day;cost;source\n2026-11-01;10;\n2026-13-01;5;\n2026-11-03;1;TikTok\n")
    await page.set_input_files("#field-file", str(bad))
    await page.click("#cost-import-submit")
    errors = page.locator("#import-errors li")
    await expect(errors).to_have_count(2)
    await expect(errors.nth(0)).to_contain_text("Linha 3")
    await expect(errors.nth(1)).to_contain_text("Linha 4")
    assert await fetch_all(db, cost_days) == []
    good = tmp_path / "good.csv"
    good.write_text("day;cost;impressions;source\n2026-11-01;10,00;;\n2026-11-02;;3000;Meta\n")
    await page.set_input_files("#field-file", str(good))
    await page.click("#cost-import-submit")
    await expect(page.locator("#flash")).to_contain_text("2 dias importados")
    assert len(await fetch_all(db, cost_days, campaign_id=campaign.id)) == 2

    await page.click("#lang-en")
    await expect(page.locator("h2")).to_have_text("Cost")
    await expect(page.locator("#current-model")).to_contain_text("CPA: per conversion")


async def test_the_cost_page_fits_a_phone(page: Page, db: AsyncEngine, owner: Account) -> None:
    campaign = await make_campaign(db, owner.workspace)
    await page.set_viewport_size(PHONE)
    await page.goto(f"/w/{owner.workspace.id}/campaigns/{campaign.id}/costs")
    await page.fill("#field-cost", "250,00")
    await page.fill("#field-impressions", "25000")
    await page.click("#cost-day-submit")
    await page.select_option("#field-model", "revshare")
    await page.fill("#field-percent", "33,33")
    await page.click("#cost-model-submit")
    await expect(page.locator("#cost-history")).to_contain_text("33,33 %")

    width = await page.evaluate("document.documentElement.scrollWidth")
    widest = await page.evaluate(WIDEST)
    assert width <= PHONE["width"], f"the cost page is {width} px wide: {widest}"
