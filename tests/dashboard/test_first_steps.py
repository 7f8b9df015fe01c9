"""A new workspace's home lists the four steps to a first sale with profit, each ticked as the
workspace gets what it makes and linking to the page that does it, until all four are done."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect
from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account, screenshot
from tests.dashboard.sales import make_merchant
from tests.factories import make_campaign, now
from trilha.db.schema import cost_days, destinations, users
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.kinds import Kind

pytestmark = BROWSER


async def test_it_ticks_each_step_as_it_is_done_and_goes_when_all_are(
    page: Page, db: AsyncEngine, owner: Account, tmp_path: Path
) -> None:
    w = f"/w/{owner.workspace.id}"
    await page.goto(w)
    steps = page.locator("#first-steps li")
    await expect(steps).to_have_count(4)
    await expect(page.locator("#first-steps li.done")).to_have_count(0)
    await expect(page.locator("#first-steps")).to_contain_text("0 de 4 feitos")
    await page.click("li[data-step='campaign'] a")
    await expect(page).to_have_url(f"{page.url.split('/w/')[0]}{w}/campaigns/new")

    campaign = await make_campaign(db, owner.workspace, name="Curso")
    await make_merchant(db, owner.workspace)
    await page.goto(w)
    await expect(page.locator("li[data-step='campaign']")).to_have_class("done")
    await expect(page.locator("li[data-step='merchant']")).to_have_class("done")
    cost = page.locator("li[data-step='cost'] a")
    await expect(cost).to_have_attribute("href", f"{w}/campaigns/{campaign.id}/costs")
    await expect(page.locator("li[data-step='destination'] a")).to_have_attribute(
        "href", f"{w}/destinations"
    )
    await expect(page.locator("#today")).to_be_visible()  # the day's figures below the steps
    await screenshot(page, "home-first-steps-pt-BR.png", tmp_path)

    async with db.begin() as conn:
        await conn.execute(
            insert(cost_days).values(
                campaign_id=campaign.id,
                day=now().date(),
                source_id="",
                workspace_id=owner.workspace.id,
                currency="BRL",
                cost=4000,
                updated_at=now(),
            )
        )
        made = await create_destination(
            conn,
            owner.workspace,
            Spec(name="Keitaro", kind=Kind.POSTBACK, url="https://tracker.example/pb"),
            now=now(),
        )
        await conn.execute(
            update(destinations).where(destinations.c.id == made.id).values(status="active")
        )
    await page.goto(w)
    await expect(page.locator("#today")).to_be_visible()
    await expect(page.locator("#first-steps")).to_have_count(0)


async def test_it_is_in_english_for_an_english_reader(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    async with db.begin() as conn:
        await conn.execute(update(users).where(users.c.id == owner.user.id).values(locale="en"))
    await page.goto(f"/w/{owner.workspace.id}")
    await expect(page.locator("#first-steps")).to_contain_text("0 of 4 done")
    await expect(page.locator("li[data-step='merchant']")).to_contain_text("postback URL")
