"""Inviting someone without an account: the owner gets a link once, the invited person makes
their account through it and lands in the workspace; someone with an account joins signed in."""

from __future__ import annotations

from playwright.async_api import Browser, Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account, sign_in
from tests.factories import fetch_all, make_user
from trilha.db.schema import invitations, memberships, users

pytestmark = BROWSER


async def test_an_invited_person_makes_an_account_and_joins(
    page: Page, browser: Browser, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/settings")
    await page.fill("#field-email", "bia@example.com")
    await page.select_option("#field-role", "viewer")
    await page.click("#member-submit")
    link = await page.locator("#new-invitation-url").inner_text()
    await expect(page.locator("#invitations")).to_contain_text("bia@example.com")

    guest = await browser.new_context(base_url=live_server, locale="pt-BR")
    invited = await guest.new_page()
    await invited.goto(link)
    await expect(invited.locator("#invitation")).to_contain_text("Loja da Ana")
    await invited.fill("#field-user_name", "Bia")
    await invited.fill("#field-password", "uma senha bem longa")
    await invited.click("#invite-submit")

    await expect(invited).to_have_url(f"{live_server}/w/{owner.workspace.id}/campaigns")
    [bia] = await fetch_all(db, users, email="bia@example.com")
    [membership] = await fetch_all(db, memberships, user_id=bia["id"])
    assert (membership["workspace_id"], membership["role"]) == (owner.workspace.id, "viewer")
    [row] = await fetch_all(db, invitations)
    assert row["accepted_at"] is not None
    await invited.goto(link)  # spent
    await expect(invited.locator("#invite-invalid")).to_be_visible()
    await guest.close()


async def test_someone_with_an_account_joins_once_signed_in_as_it(
    page: Page, browser: Browser, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    caio = await make_user(db, email="caio@example.com")
    await page.goto(f"/w/{owner.workspace.id}/settings")
    await page.fill("#field-email", "nova@example.com")
    await page.click("#member-submit")
    link = await page.locator("#new-invitation-url").inner_text()
    nova = await make_user(db, email="nova@example.com")  # an account made before the link opens

    guest = await browser.new_context(base_url=live_server, locale="pt-BR")
    invited = await guest.new_page()
    await invited.goto(link)
    await expect(invited.locator("#invite-sign-in")).to_contain_text("nova@example.com")
    await sign_in(db, guest, caio, live_server)
    await invited.goto(link)
    await expect(invited.locator("#invite-wrong-user")).to_contain_text("caio@example.com")
    assert await fetch_all(db, memberships, user_id=nova.id) == []

    await guest.clear_cookies()
    await sign_in(db, guest, nova, live_server)
    await invited.goto(link)
    await invited.click("#invite-submit")

    await expect(invited).to_have_url(f"{live_server}/w/{owner.workspace.id}/campaigns")
    [membership] = await fetch_all(db, memberships, user_id=nova.id)
    assert membership["role"] == "member"
    await guest.close()
