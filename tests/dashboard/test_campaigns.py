"""Campaigns in the browser: the form, its errors and live preview, the tracking link it makes,
pausing, and what viewers may see."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account, add_to_workspace, screenshot, sign_in
from tests.factories import fetch_all, fetch_clicks, make_campaign, make_source, make_user
from trilha.db.schema import campaigns
from trilha.workspaces import Role

pytestmark = BROWSER


async def test_a_campaign_made_with_the_form_has_a_working_tracking_link(
    page: Page, db: AsyncEngine, owner: Account, tmp_path: Path
) -> None:
    await make_source(db, owner.workspace, name="Facebook Ads")
    await page.goto("/")
    await expect(page.locator("#first-steps")).to_contain_text("Crie uma campanha")
    await page.click("#first-steps li[data-step='campaign'] a")

    await page.fill("#field-name", "Black Friday Curso")
    await expect(page.locator("#field-slug")).to_have_value("black-friday-curso")
    await page.fill(
        "#field-offer_url", "https://pay.example.com/checkout?src={click_id}&ad={ad_id}"
    )
    await page.select_option("#field-source_id", label="Facebook Ads")
    await expect(page.locator("#preview-url")).to_contain_text("ad=120200000000")
    await screenshot(page, "trilha-form.png", tmp_path)
    await page.click("#campaign-submit")

    await expect(page.locator("#flash")).to_contain_text("Campanha Black Friday Curso criada")
    row = page.locator("#campaigns tbody tr")
    await expect(row).to_have_count(1)
    await expect(row.locator(".badge")).to_have_text("Ativa")
    await expect(row).to_contain_text("Facebook Ads")
    tracking_url = await row.locator(".tracking-url").inner_text()
    await screenshot(page, "trilha-campaigns.png", tmp_path)

    async with httpx.AsyncClient() as client:
        response = await client.get(tracking_url, params={"ad_id": "987"})

    assert response.status_code == 302
    [click] = await fetch_clicks(db)
    assert (
        response.headers["location"] == f"https://pay.example.com/checkout?src={click['id']}&ad=987"
    )
    [campaign] = await fetch_all(db, campaigns)
    assert (campaign["slug"], campaign["id"]) == ("black-friday-curso", click["campaign_id"])


async def test_an_invalid_offer_url_is_shown_by_its_field_and_nothing_is_stored(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/campaigns/new")
    await page.fill("#field-name", "Sem esquema")
    await page.fill("#field-offer_url", "pay.example.com/checkout")
    await page.click("#campaign-submit")

    await expect(page.locator("#error-offer_url")).to_have_text(
        "deve começar com http:// ou https://"
    )
    await expect(page.locator("#field-offer_url")).to_have_attribute("aria-invalid", "true")
    await expect(page.locator("#field-name")).to_have_value("Sem esquema")
    assert await fetch_all(db, campaigns) == []


async def test_a_slug_in_use_is_shown_by_its_field(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await make_campaign(db, owner.workspace, slug="oferta")
    await page.goto(f"/w/{owner.workspace.id}/campaigns/new")
    await page.fill("#field-name", "Outra")
    await page.fill("#field-slug", "oferta")
    await page.fill("#field-offer_url", "https://pay.example.com/")
    await page.click("#campaign-submit")

    await expect(page.locator("#error-slug")).to_have_text("este slug já está em uso neste domínio")
    assert len(await fetch_all(db, campaigns)) == 1


async def test_the_macro_preview_fills_macros_and_flags_unknown_ones(
    page: Page, owner: Account
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/campaigns/new")
    await page.fill("#field-sample", "ad_id=42&cor=azul")

    await page.fill("#field-offer_url", "https://pay.example.com/?ad={ad_id}&c={cor}&x={clik_id}")

    await expect(page.locator("#preview-url")).to_have_text(
        "https://pay.example.com/?ad=42&c=azul&x={clik_id}"
    )
    await expect(page.locator("#unknown-macros")).to_contain_text("{clik_id}")
    await page.fill("#field-offer_url", "https://pay.example.com/?ad={ad_id}")
    await expect(page.locator("#unknown-macros")).to_have_count(0)


async def test_pausing_a_campaign_updates_its_row(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    campaign = await make_campaign(db, owner.workspace, name="Lançamento")
    await page.goto(f"/w/{owner.workspace.id}/campaigns")

    await page.click(f"#campaign-{campaign.id} .toggle-status")

    await expect(page.locator(f"#campaign-{campaign.id} .badge")).to_have_text("Pausada")
    [row] = await fetch_all(db, campaigns)
    assert row["status"] == "paused"
    await page.click(f"#campaign-{campaign.id} .toggle-status")
    await expect(page.locator(f"#campaign-{campaign.id} .badge")).to_have_text("Ativa")


async def test_editing_a_campaign_changes_its_offer(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    campaign = await make_campaign(db, owner.workspace, name="Oferta A")
    await page.goto(f"/w/{owner.workspace.id}/campaigns/{campaign.id}")
    await page.fill("#field-offer_url", "https://pay.example.com/b?cid={click_id}")
    await page.click("#campaign-submit")

    await expect(page.locator("#flash")).to_contain_text("Campanha Oferta A salva")
    [row] = await fetch_all(db, campaigns)
    assert row["offer_url"] == "https://pay.example.com/b?cid={click_id}"


async def test_a_viewer_sees_campaigns_without_edit_controls(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    campaign = await make_campaign(db, owner.workspace, name="Só leitura")
    viewer = await make_user(db, email="leitor@example.com")
    await add_to_workspace(db, owner.workspace, viewer, Role.VIEWER)
    await page.context.clear_cookies()
    await sign_in(db, page.context, viewer, live_server)

    await page.goto(f"/w/{owner.workspace.id}/campaigns")

    await expect(page.locator(f"#campaign-{campaign.id}")).to_be_visible()
    await expect(page.locator("#read-only")).to_be_visible()
    for control in ("#new-campaign", ".toggle-status", ".edit-link"):
        await expect(page.locator(control)).to_have_count(0)
    await page.click(".campaign-name")
    await expect(page.locator("#campaign-submit")).to_have_count(0)
    await expect(page.locator("#field-offer_url")).to_be_disabled()


async def test_a_viewer_cannot_change_a_campaign_by_posting(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    campaign = await make_campaign(db, owner.workspace)
    viewer = await make_user(db)
    await add_to_workspace(db, owner.workspace, viewer, Role.VIEWER)
    await page.context.clear_cookies()
    await sign_in(db, page.context, viewer, live_server)
    await page.goto(f"/w/{owner.workspace.id}/campaigns")
    csrf = await page.locator("body").get_attribute("hx-headers")
    assert csrf is not None

    response = await page.request.post(
        f"/w/{owner.workspace.id}/campaigns/{campaign.id}/status",
        form={"status": "paused"},
        headers={"X-CSRF-Token": csrf.split('"')[3]},
    )

    assert response.status == 403
    [row] = await fetch_all(db, campaigns)
    assert row["status"] == "active"
