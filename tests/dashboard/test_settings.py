"""Workspace settings in the browser: the workspace form, the postback URL, exchange rates,
members, API keys."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import make_click, send_generic
from tests.factories import fetch_all, make_user
from trilha.db.schema import api_keys, conversions, memberships, workspaces
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


async def test_a_member_adds_a_rate_that_converts_a_waiting_sale_and_deletes_it(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    _, click_id = await make_click(db, live_server, owner.workspace)
    answer = await send_generic(
        live_server, owner.workspace, click_id=click_id, txid="AR1", payout="10000", currency="ARS"
    )
    await page.goto(f"/w/{owner.workspace.id}/settings#rates")
    await page.fill("#rates #field-currency", "ars")
    await page.fill("#rates #field-rate", "abc")
    await page.click("#rate-submit")
    await expect(page.locator("#rates #error-day")).to_contain_text("deve ser uma data")
    await expect(page.locator("#rates #error-rate")).to_contain_text("deve ser um número")

    await page.fill("#rates #field-day", "2026-01-01")
    await page.fill("#rates #field-rate", "0,0055")
    await page.click("#rate-submit")
    await expect(page.locator("#flash")).to_have_text(
        "Cotação de ARS salva; 1 vendas à espera convertidas."
    )
    row = page.locator("#rate-list .rate[data-currency='ARS']")
    await expect(row).to_contain_text("01/01/2026")
    await expect(row).to_contain_text("0,0055")
    [sale] = await fetch_all(db, conversions, id=answer["conversion_id"])
    assert (sale["report_value_minor"], sale["report_currency"]) == (5500, "BRL")

    page.on("dialog", lambda dialog: dialog.accept())
    await row.locator(".delete-rate").click()
    await expect(page.locator("#flash")).to_contain_text("Cotação excluída")
    await expect(page.locator("#rate-list")).to_have_count(0)
    [sale] = await fetch_all(db, conversions, id=answer["conversion_id"])
    assert sale["report_value_minor"] == 5500
