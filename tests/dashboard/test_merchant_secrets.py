"""The merchant form refuses a made-up secret shorter than 16 characters, in the user's
language, takes a platform's token as the platform issues it, and a merchant whose short secret
works says so on its page."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import make_merchant
from tests.factories import fetch_all
from trilha.db.schema import merchants, users

pytestmark = BROWSER


async def test_the_form_refuses_a_short_made_up_secret_in_portuguese_and_in_english(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/merchants/new")
    await page.select_option("#field-preset", "generic")
    await page.fill("#field-name", "Loja")
    await page.fill("#field-secret", "curto-1234")
    await page.click("#merchant-submit")

    await expect(page.locator("#error-secret")).to_have_text("deve ter pelo menos 16 caracteres")
    async with db.begin() as conn:
        await conn.execute(update(users).values(locale="en"))
    await page.fill("#field-secret", "short-1234")
    await page.click("#merchant-submit")

    await expect(page.locator("#error-secret")).to_have_text("must be at least 16 characters")
    assert await fetch_all(db, merchants) == []


async def test_a_merchant_with_an_old_short_secret_shows_a_warning(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    merchant = await make_merchant(db, owner.workspace)
    plain = await make_merchant(db, owner.workspace, key="outra", secret="x" * 16)
    async with db.begin() as conn:
        await conn.execute(
            update(merchants).where(merchants.c.id == merchant.id).values(secret="abc")
        )

    await page.goto(f"/w/{owner.workspace.id}/merchants/{merchant.id}")

    await expect(page.locator("#secret-warning")).to_contain_text("menos de 16 caracteres")
    await expect(page.locator("#secret-configured")).to_be_visible()
    await page.goto(f"/w/{owner.workspace.id}/merchants/{plain.id}")
    await expect(page.locator("#secret-configured")).to_be_visible()
    await expect(page.locator("#secret-warning")).to_have_count(0)


async def test_the_form_takes_kiwifys_own_token_and_warns_that_it_is_short(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/merchants/new")
    await page.fill("#field-name", "Kiwify")
    await page.select_option("#field-preset", "kiwify")
    await page.fill("#field-secret", "rxue90njjv1")
    await page.click("#merchant-submit")

    await expect(page.locator("#secret-warning")).to_contain_text("menos de 16 caracteres")
    await expect(page.locator("#secret-configured")).to_be_visible()
    [row] = await fetch_all(db, merchants)
    assert (row["preset"], row["secret"]) == ("kiwify", "rxue90njjv1")
