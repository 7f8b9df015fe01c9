"""Workspace settings in the browser: the workspace form, the postback URL, members, API keys."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.factories import fetch_all, make_user
from trilha.db.schema import api_keys, memberships, workspaces
from trilha.ids import hash_secret

pytestmark = BROWSER


async def test_an_api_key_is_shown_once(page: Page, db: AsyncEngine, owner: Account) -> None:
    await page.goto(f"/w/{owner.workspace.id}/settings")
    await page.fill("#field-key_name", "Planilha")
    await page.click("#api-key-submit")

    secret = await page.locator("#new-key-secret").inner_text()
    assert secret.startswith("trk_")
    [key] = await fetch_all(db, api_keys)
    assert key["key_hash"] == hash_secret(secret)
    await expect(page.locator("#api-key-list")).to_contain_text(key["prefix"])

    await page.reload()
    await expect(page.locator("#api-key-list")).to_contain_text("Planilha")
    await expect(page.locator("#new-key-secret")).to_have_count(0)
    assert secret not in await page.content()


async def test_an_owner_edits_the_workspace_and_rotates_its_token(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    await page.goto(f"/w/{owner.workspace.id}/settings")
    await expect(page.locator("#postback-url")).to_have_text(
        f"{live_server}/postback?token={owner.workspace.postback_token}"
    )

    await page.fill("#workspace-settings #field-name", "Loja Nova")
    await page.select_option("#field-timezone", "America/Manaus")
    await page.fill("#field-currency", "usd")
    await page.fill("#field-hold_days", "400")
    await page.click("#settings-submit")
    await expect(page.locator("#error-hold_days")).to_contain_text("de 0 a 365")
    await page.fill("#field-hold_days", "30")
    await page.click("#settings-submit")
    await expect(page.locator("#flash")).to_contain_text("Configurações salvas")
    await expect(page.locator("#field-hold_days")).to_have_value("30")
    await page.click("#rotate-token")
    await expect(page.locator("#flash")).to_contain_text("Novo token gerado")

    [row] = await fetch_all(db, workspaces)
    assert (row["name"], row["timezone"], row["currency"]) == ("Loja Nova", "America/Manaus", "USD")
    assert row["hold_days"] == 30
    assert row["postback_token"] != owner.workspace.postback_token
    await expect(page.locator("#postback-url")).to_contain_text(row["postback_token"])


async def test_an_owner_adds_a_member_and_changes_their_role(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await make_user(db, email="socio@example.com")
    await page.goto(f"/w/{owner.workspace.id}/settings")

    await page.fill("#members #field-email", "ninguem@example.com")
    await page.click("#member-submit")
    # No account: an invitation link, shown once, instead of an error.
    await expect(page.locator("#new-invitation")).to_contain_text("ninguem@example.com")

    await page.fill("#members #field-email", "socio@example.com")
    await page.select_option("#members #field-role", "viewer")
    await page.click("#member-submit")
    await expect(page.locator("#flash")).to_contain_text("socio@example.com agora faz parte")

    member = page.locator("tr.member[data-email='socio@example.com']")
    await member.locator("select").select_option("member")
    await member.locator("button", has_text="Alterar").click()
    await expect(page.locator("#flash")).to_contain_text("Papel alterado")
    roles = {row["user_id"]: row["role"] for row in await fetch_all(db, memberships)}
    assert sorted(roles.values()) == ["member", "owner"]
