"""Buyers' data in the browser: the log shows it masked, the owner keeps it in clear only with a
warning, forgets a buyer, and deletes a test postback's conversion."""

from __future__ import annotations

import hashlib

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import HOTTOK, hotmart_sale, make_click, make_merchant, send_hotmart
from tests.deliveries.test_forget_buyer import database_files
from tests.factories import fetch_all
from trilha.db.schema import conversions, postback_log, workspaces

pytestmark = BROWSER


async def test_an_owner_keeps_buyers_data_in_clear_only_with_a_warning_and_forgets_a_buyer(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    merchant = await make_merchant(db, owner.workspace, secret=HOTTOK)
    _, click_id = await make_click(db, live_server, owner.workspace)
    url = merchant.postback_url(live_server, owner.workspace.postback_token)
    sale = await send_hotmart(url, hotmart_sale(click_id, txid="HP-1"))

    await page.goto(f"/w/{owner.workspace.id}/postbacks/{sale['postback_id']}")
    await expect(page.locator("#request-text")).to_contain_text(click_id)
    assert "comprador@example.com" not in await page.content()
    assert "Comprador Teste" not in await page.content()

    await page.goto(f"/w/{owner.workspace.id}/settings")
    await expect(page.locator("#privacy-warning")).to_have_count(0)
    await page.check("#keeps-buyer-data")
    await page.click("#privacy-submit")
    await expect(page.locator("#privacy-warning")).to_contain_text("LGPD")
    [row] = await fetch_all(db, workspaces)
    assert row["keeps_buyer_data"] is True

    await page.fill("#privacy #field-buyer", "não é ninguém")
    await page.click("#forget-submit")
    await expect(page.locator("#privacy .field-error")).to_be_visible()
    await page.fill("#privacy #field-buyer", "Comprador@Example.com")
    await page.click("#forget-submit")
    await expect(page.locator("#flash")).to_contain_text("1 postbacks esvaziados")
    [entry] = await fetch_all(db, postback_log)
    assert entry["body"] == ""
    [conversion] = await fetch_all(db, conversions)
    assert conversion["buyer_email_sha256"] is None
    email_sha256 = hashlib.sha256(b"comprador@example.com").hexdigest().encode()
    for name, content in database_files(db).items():  # the WAL, truncated, keeps no older row
        assert email_sha256 not in content, name
    await page.goto(f"/w/{owner.workspace.id}/postbacks/{sale['postback_id']}")
    await expect(page.locator("#payload-purged")).to_be_visible()


async def test_a_test_conversion_is_shown_as_a_test_and_deleted(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    merchant = await make_merchant(db, owner.workspace, secret=HOTTOK)
    await page.goto(f"/w/{owner.workspace.id}/merchants/{merchant.id}")
    await page.fill("#field-trial_value", "10,00")
    await page.click("#trial-submit")
    await expect(page.locator("#trial-result")).to_be_visible()

    await page.goto(f"/w/{owner.workspace.id}/conversions")
    await expect(page.locator(".conversion .test-badge")).to_have_text("teste")
    await page.click(".conversion-link")
    await expect(page.locator("#test-badge")).to_be_visible()
    await page.click("#delete-test")

    await expect(page.locator("#flash")).to_contain_text("Conversão de teste apagada")
    await expect(page.locator(".conversion")).to_have_count(0)
    assert await fetch_all(db, conversions) == []
