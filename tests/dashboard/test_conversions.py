"""Conversions in the browser: status and value in the list, the status history of a refund,
and attaching an orphan to its click by hand."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import (
    hotmart_sale,
    make_click,
    make_merchant,
    send_generic,
    send_hotmart,
)
from tests.factories import fetch_all
from trilha.db.schema import conversions

pytestmark = BROWSER


async def test_a_refund_shows_in_the_list_and_in_the_status_history(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    merchant = await make_merchant(db, owner.workspace, name="Hotmart Cursos")
    campaign, click_id = await make_click(db, live_server, owner.workspace, name="Black Friday")
    url = merchant.postback_url(live_server, owner.workspace.postback_token)
    await send_hotmart(url, hotmart_sale(click_id, txid="HP-9", value=1234.56, hottok=None))
    refund = await send_hotmart(
        url,
        hotmart_sale(click_id, txid="HP-9", value=1234.56, event="PURCHASE_REFUNDED", hottok=None),
    )
    assert refund["status"] == "status_changed"

    await page.goto(f"/w/{owner.workspace.id}/conversions")

    row = page.locator(".conversion")
    await expect(row).to_have_count(1)
    await expect(row.locator(".badge")).to_have_text("Reembolsada")
    await expect(row.locator(".value")).to_have_text("R$ 1.234,56")
    await expect(row).to_contain_text("HP-9")
    await expect(row).to_contain_text("Black Friday")
    await expect(row).to_contain_text("Hotmart Cursos")
    await page.select_option("#filter-status", "approved")
    await page.click("#filter-submit")
    await expect(page.locator(".conversion")).to_have_count(0)
    await page.select_option("#filter-status", "refunded")
    await page.click("#filter-submit")
    await page.click(".conversion-link")

    history = page.locator(".history-entry")
    await expect(history).to_have_count(2)
    await expect(history.first).to_contain_text("criada como Aprovada")
    await expect(history.last).to_contain_text("Aprovada → Reembolsada")
    await expect(page.locator("#conversion-campaign")).to_have_text(campaign.name)
    await history.last.locator(".history-postback").click()
    await expect(page.locator("h2 .badge")).to_have_text("Status alterado")
    assert page.url.endswith(f"/postbacks/{refund['postback_id']}")


async def test_an_orphan_is_attached_to_its_click_by_hand(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    campaign, click_id = await make_click(db, live_server, owner.workspace, name="Lançamento")
    await send_generic(live_server, owner.workspace, click_id=click_id, payout="10", txid="OK-1")
    orphan = await send_generic(
        live_server, owner.workspace, click_id="perdido-123", payout="47,90", txid="EMAIL-1"
    )
    await page.goto(f"/w/{owner.workspace.id}/conversions")
    await expect(page.locator(".conversion")).to_have_count(2)
    await page.select_option("#filter-orphan", "yes")
    await page.click("#filter-submit")
    await expect(page.locator(".conversion")).to_have_count(1)
    await expect(page.locator(".conversion")).to_contain_text("perdido-123")
    await page.click(".conversion-link")

    await page.fill("#field-click_id", "nao-existe")
    await page.click("#attach-submit")
    await expect(page.locator("#error-click_id")).to_have_text(
        "nenhum clique com este id no workspace"
    )
    await page.fill("#field-click_id", click_id)
    await page.click("#attach-submit")

    await expect(page.locator("#flash")).to_contain_text(f"ligada ao clique {click_id}")
    await expect(page.locator("#conversion-campaign")).to_have_text("Lançamento")
    await expect(page.locator("#attach")).to_have_count(0)
    [row] = await fetch_all(db, conversions, id=orphan["conversion_id"])
    assert (row["click_id"], row["campaign_id"], row["value_minor"]) == (
        click_id,
        campaign.id,
        4790,
    )
