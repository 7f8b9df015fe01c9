"""Custom domains in the browser: add with a fallback, refuse a bad host, remove."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.factories import fetch_all
from trilha.db.schema import domains

pytestmark = BROWSER


async def test_a_domain_is_added_and_removed(page: Page, db: AsyncEngine, owner: Account) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    await page.goto(f"/w/{owner.workspace.id}/domains")
    await expect(page.locator("#dns-note")).to_contain_text("CNAME  127.0.0.1.")

    await page.fill("#field-host", "https://track.loja.com.br")
    await page.click("#domain-submit")
    await expect(page.locator("#error-host")).to_contain_text("sem https://")

    await page.fill("#field-host", "Track.Loja.com.br")
    await page.fill("#field-fallback_url", "https://loja.com.br/")
    await page.click("#domain-submit")
    await expect(page.locator("#domains")).to_contain_text("track.loja.com.br")
    [row] = await fetch_all(db, domains)
    assert row["fallback_url"] == "https://loja.com.br/"

    await page.click("#domains button")
    await expect(page.locator("#flash")).to_contain_text("Domínio track.loja.com.br removido")
    assert await fetch_all(db, domains) == []
