"""Workspaces in the browser: creating one from the switcher, and remembering the current one."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.factories import fetch_all
from trilha.db.schema import memberships, workspaces

pytestmark = BROWSER


async def test_a_new_workspace_is_created_from_the_switcher_and_remembered(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await page.goto("/")
    await page.click(".workspace-switcher summary")
    await page.click(".new-workspace")
    await page.fill("#field-name", "Cliente Beta")
    await page.select_option("#field-timezone", "America/Fortaleza")
    await page.click("#workspace-submit")

    await expect(page.locator("#workspace-switcher")).to_have_text("Cliente Beta")
    [row] = await fetch_all(db, workspaces, name="Cliente Beta")
    assert (row["timezone"], row["currency"]) == ("America/Fortaleza", "BRL")
    assert len(await fetch_all(db, memberships, user_id=owner.user.id)) == 2

    await page.goto("/")
    await expect(page.locator("#workspace-switcher")).to_have_text("Cliente Beta")
    await page.click(".workspace-switcher summary")
    await page.click(f".workspace-switcher a[href='/w/{owner.workspace.id}']")
    await expect(page.locator("#workspace-switcher")).to_have_text("Loja da Ana")
    await page.goto("/")
    await expect(page.locator("#workspace-switcher")).to_have_text("Loja da Ana")


async def test_a_workspace_without_a_name_is_refused(page: Page, owner: Account) -> None:
    await page.goto("/workspaces/new")
    await page.fill("#field-name", "   ")
    await page.click("#workspace-submit")
    await expect(page.locator("#error-name")).to_have_text("não pode ficar vazio")
