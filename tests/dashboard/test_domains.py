"""Custom domains in the browser: add with a fallback, refuse a bad host, verify, remove."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dns_server import DnsServer
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

    await page.click(f"#remove-{row['id']}")
    await expect(page.locator("#flash")).to_contain_text("Domínio track.loja.com.br removido")
    assert await fetch_all(db, domains) == []


async def test_a_domain_is_pending_until_its_txt_record_is_verified(
    page: Page, db: AsyncEngine, owner: Account, dns_records: DnsServer
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/domains")
    for refused, reason in (
        ("127.0.0.1", "endereço IP não pode ser domínio próprio"),
        ("app.localhost", "nomes localhost não podem ser domínios próprios"),
    ):
        await page.fill("#field-host", refused)
        await page.click("#domain-submit")
        await expect(page.locator("#error-host")).to_contain_text(reason)
    await page.fill("#field-host", "go.loja.com.br")
    await page.click("#domain-submit")
    [row] = await fetch_all(db, domains)
    token = row["verification_token"]
    await expect(page.locator(f"#domain-{row['id']}")).to_contain_text("pendente")
    await expect(page.locator(f"#record-{row['id']}")).to_contain_text(
        f'_trilha.go.loja.com.br.  TXT  "{token}"'
    )

    await page.click(f"#verify-{row['id']}")
    await expect(page.locator("#flash")).to_contain_text(
        "Ainda não verificado: não há registro TXT em '_trilha.go.loja.com.br'"
    )
    await expect(page.locator(f"#check-error-{row['id']}")).to_contain_text("não há registro TXT")

    dns_records.publish("_trilha.go.loja.com.br", token)
    await page.click(f"#verify-{row['id']}")
    await expect(page.locator("#flash")).to_contain_text("Domínio go.loja.com.br verificado")
    await expect(page.locator(f"#domain-{row['id']}")).to_contain_text("verificado")
    await expect(page.locator(f"#record-{row['id']}")).to_have_count(0)
    [verified] = await fetch_all(db, domains)
    assert (verified["status"], verified["check_error"]) == ("verified", None)
