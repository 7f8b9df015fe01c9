"""The click log in the browser: a first click appears by itself from the campaign's page, the
filters narrow the list, and a click opens with its parameters and its conversions."""

from __future__ import annotations

import httpx
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import make_click, send_generic
from tests.factories import make_campaign

pytestmark = BROWSER


async def test_a_new_users_first_click_shows_up_live_from_the_campaign_page(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    campaign = await make_campaign(db, owner.workspace, name="Black Friday", slug="bf")
    await page.goto(f"/w/{owner.workspace.id}/campaigns/{campaign.id}")
    await page.click("#campaign-clicks")
    await expect(page.locator(".empty-state")).to_have_count(1)

    async with httpx.AsyncClient() as client:
        await client.get(f"{live_server}/r/bf?sub1=ad-42", headers={"user-agent": "curl/8"})

    row = page.locator(".click")
    await expect(row).to_have_count(1, timeout=15_000)  # the page polls every 5 s
    await expect(row).to_contain_text("Black Friday")
    await expect(row).to_contain_text("sub1=ad-42")
    await expect(row.locator(".bot")).to_have_text("Bot")
    await expect(row.locator(".unique")).to_have_count(0)  # a bot's click is never unique


async def test_clicks_filter_and_open_with_their_conversions(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    _, sold = await make_click(db, live_server, owner.workspace, name="Lançamento")
    await make_click(db, live_server, owner.workspace, name="Perpétuo")
    await send_generic(live_server, owner.workspace, click_id=sold, payout="97,00", txid="V-1")
    await send_generic(
        live_server, owner.workspace, click_id=sold, payout="97,00", txid="V-1", status="refunded"
    )

    await page.goto(f"/w/{owner.workspace.id}/clicks")
    await expect(page.locator(".click")).to_have_count(2)
    await page.select_option("#filter-converted", "yes")
    await page.click("#filter-submit")
    row = page.locator(".click")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("Lançamento")
    await expect(row.locator(".conversions")).to_contain_text("SALE")
    await expect(row.locator(".conversions .badge")).to_have_text("Reembolsada")
    await expect(row.locator(".conversions")).to_contain_text("R$ 97,00")

    await row.locator(".click-link").click()
    await expect(page.locator("#click-id")).to_have_text(sold)
    history = page.locator(".history-entry")
    await expect(history).to_have_count(2)
    await expect(history.last).to_contain_text("Aprovada → Reembolsada")
    await expect(page.locator("#click-campaign")).to_have_text("Lançamento")
