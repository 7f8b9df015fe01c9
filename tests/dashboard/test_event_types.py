"""Event types in the browser: the built-in ones' flags, and custom types added and deleted."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.factories import fetch_all
from trilha.db.schema import event_types

pytestmark = BROWSER


async def test_flags_are_edited_and_custom_types_added_and_deleted(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    await page.goto(f"/w/{owner.workspace.id}/settings")
    await page.click("#event-types-link")
    lead = page.locator("#event-type-LEAD")
    await expect(lead.locator(".delete-event-type")).to_have_count(0)

    await lead.locator("[name=counts_as_revenue]").check()
    await lead.locator(".save-event-type").click()
    await expect(page.locator("#flash")).to_contain_text("Tipo de evento LEAD salvo")
    await page.fill("#field-name", "renovacao_anual")
    await page.check("#field-counts_as_revenue")
    await page.click("#event-type-submit")
    await expect(page.locator("#flash")).to_contain_text("RENOVACAO_ANUAL criado")
    await page.fill("#field-name", "Renovacao_Anual")
    await page.click("#event-type-submit")
    await expect(page.locator("#error-name")).to_have_text(
        "já existe um tipo de evento com este nome"
    )

    rows = {row["name"]: row for row in await fetch_all(db, event_types)}
    assert (rows["LEAD"]["counts_as_conversion"], rows["LEAD"]["counts_as_revenue"]) == (True, True)
    custom = rows["RENOVACAO_ANUAL"]
    assert (custom["counts_as_conversion"], custom["counts_as_revenue"], custom["is_builtin"]) == (
        True,
        True,
        False,
    )
    await page.locator("#event-type-RENOVACAO_ANUAL .delete-event-type").click()
    await expect(page.locator("#flash")).to_contain_text("RENOVACAO_ANUAL apagado")
    assert len(await fetch_all(db, event_types)) == len(rows) - 1

    await page.click("#lang-en")
    await expect(page.locator("h2")).to_have_text("Event types")
    await expect(page.locator("#event-types thead")).to_contain_text("Counts as revenue")
