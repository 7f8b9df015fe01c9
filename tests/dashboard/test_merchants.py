"""Merchants in the browser: the form with its preset, secret, mapping and rules; the postback
URL it gives and the sales that then arrive; campaigns that name their merchant."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account, add_to_workspace, screenshot, sign_in
from tests.dashboard.sales import (
    HOTTOK,
    hotmart_sale,
    make_click,
    make_merchant,
    send_generic,
    send_hotmart,
)
from tests.factories import fetch_all, make_user
from trilha.db.schema import campaigns, conversions, merchants, postback_log
from trilha.merchants import MAX_WINDOW
from trilha.workspaces import Role

pytestmark = BROWSER


async def test_a_merchant_made_with_the_form_gives_the_url_its_sales_arrive_on(
    page: Page, db: AsyncEngine, owner: Account, live_server: str, tmp_path: Path
) -> None:
    _, click_id = await make_click(db, live_server, owner.workspace)
    await page.goto(f"/w/{owner.workspace.id}/merchants")
    await page.click(".empty-state [role=button]")

    await page.fill("#field-name", "Hotmart Loja")
    await expect(page.locator("#field-key")).to_have_value("hotmart-loja")
    await expect(page.locator("#field-preset")).to_have_value("hotmart")
    await expect(page.locator("#preset-setup")).to_contain_text("hottok")
    await expect(page.locator("#field-path_click_id")).to_have_attribute(
        "placeholder",
        "data.purchase.origin.sck, data.purchase.origin.src, data.purchase.origin.xcod",
    )
    await expect(page.locator("#preset-rules")).to_contain_text("PURCHASE_REFUNDED")
    await page.fill("#field-secret", HOTTOK)
    await screenshot(page, "trilha-merchant-form.png", tmp_path)
    await page.click("#merchant-submit")

    await expect(page.locator("#flash")).to_contain_text("Plataforma Hotmart Loja criada")
    url = f"{live_server}/pb/hotmart-loja?token={owner.workspace.postback_token}"
    await expect(page.locator("#postback-url")).to_have_text(url)
    await expect(page.locator("#secret-configured")).to_have_text("Configurado")
    assert HOTTOK not in await page.content()
    [row] = await fetch_all(db, merchants)
    assert (row["key"], row["preset"], row["secret"]) == ("hotmart-loja", "hotmart", HOTTOK)

    answer = await send_hotmart(url, hotmart_sale(click_id, value=1234.56))

    assert answer["status"] == "created"
    await page.click("nav.sections >> text=Postbacks S2S")
    entry = page.locator(".log-entry")
    await expect(entry).to_have_count(1)
    await expect(entry.locator(".badge")).to_have_text("Casado")
    await expect(entry).to_contain_text("Hotmart Loja")
    await expect(entry).to_contain_text("R$ 1.234,56")
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["merchant_id"], conversion["click_id"]) == (row["id"], click_id)


async def test_the_mapping_is_edited_without_redeploy(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    merchant = await make_merchant(
        db, owner.workspace, key="loja", name="Loja", preset="generic", secret="antigo-segredo-9Xq"
    )
    await page.goto(f"/w/{owner.workspace.id}/merchants/{merchant.id}")
    window = page.locator("#field-dedupe_window_minutes")
    await expect(window).to_have_attribute("max", str(MAX_WINDOW))
    await expect(page.locator("#field-key")).to_have_attribute("maxlength", "40")
    await page.select_option("#field-preset", "kiwify")
    await expect(page.locator("#preset-setup")).to_contain_text("Kiwify")
    await expect(page.locator("#preset-rules")).to_contain_text("order_refunded")

    await page.fill("#field-path_click_id", "data.tracking.meu_src")
    await page.fill("#field-ip_allowlist", "203.0.113.7\nnão é ip")
    await expect(page.locator(".rule-row")).to_have_count(0)  # none reads as a rule set
    await expect(page.locator("#no-rules")).to_be_visible()
    await page.click("#add-rule")
    await expect(page.locator("#no-rules")).to_be_hidden()
    rule = page.locator(".rule-row").first
    await rule.locator("[name=rule_when_status]").fill("trial")
    await rule.locator("[name=rule_event_type]").select_option("LEAD")
    await rule.locator("[name=rule_status]").select_option("pending")
    await page.click("#add-rule")
    await expect(page.locator(".rule-row")).to_have_count(2)
    await page.click("#merchant-submit")

    await expect(page.locator("#error-ip_allowlist")).to_contain_text("não é um IP")
    await page.fill("#field-ip_allowlist", "203.0.113.7\n198.51.100.0/24")
    # "²" passes str.isdigit() but is no number: a clear error, not a 500.
    await page.eval_on_selector(
        "#field-dedupe_window_minutes", "field => { field.type = 'text'; field.value = '²'; }"
    )
    await page.click("#merchant-submit")
    await expect(page.locator("#error-dedupe_window_minutes")).to_be_visible()
    await page.fill("#field-dedupe_window_minutes", "60")
    await page.check("#field-clear_secret")
    await page.click("#merchant-submit")

    await expect(page.locator("#flash")).to_contain_text("Plataforma Loja salva")
    [row] = await fetch_all(db, merchants)
    assert row["preset"] == "kiwify"
    assert row["field_paths"] == {"click_id": "data.tracking.meu_src"}
    assert row["ip_allowlist"] == ["203.0.113.7/32", "198.51.100.0/24"]
    assert row["rules"] == [
        {"when_event": None, "when_status": "trial", "event_type": "LEAD", "status": "pending"}
    ]
    assert row["secret"] is None
    await expect(page.locator("#secret-configured")).to_have_count(0)
    await expect(page.locator("[name=rule_when_status]").first).to_have_value("trial")


async def test_a_campaign_names_its_merchant_so_postbacks_need_no_key(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    merchant = await make_merchant(db, owner.workspace, name="Hotmart Cursos")
    campaign, click_id = await make_click(db, live_server, owner.workspace)
    await page.goto(f"/w/{owner.workspace.id}/campaigns/{campaign.id}")

    await page.select_option("#field-merchant_id", label="Hotmart Cursos")
    await page.click("#campaign-submit")

    await expect(page.locator("#flash")).to_contain_text("salva")
    [row] = await fetch_all(db, campaigns, id=campaign.id)
    assert row["merchant_id"] == merchant.id
    # The click id in a common parameter finds the click, whose campaign names the merchant;
    # Hotmart's mapping then reads the body (the generic one would not know PURCHASE_APPROVED).
    url = f"{owner.workspace.postback_url(live_server)}&sck={click_id}"
    answer = await send_hotmart(url, hotmart_sale(click_id, hottok=None))
    assert (answer["status"], answer["event"]) == ("created", "SALE")
    [conversion] = await fetch_all(db, conversions)
    assert conversion["merchant_id"] == merchant.id


async def test_a_viewer_sees_the_pages_but_no_token_and_no_controls(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    merchant = await make_merchant(db, owner.workspace, secret=HOTTOK)
    failed = await send_generic(live_server, owner.workspace, click_id="x", tipo="trial")
    orphan = await send_generic(live_server, owner.workspace, click_id="sem-clique", txid="T")
    viewer = await make_user(db)
    await add_to_workspace(db, owner.workspace, viewer, Role.VIEWER)
    await page.context.clear_cookies()
    await sign_in(db, page.context, viewer, live_server)
    token = owner.workspace.postback_token

    await page.goto(f"/w/{owner.workspace.id}/merchants")
    await expect(page.locator(f"#merchant-{merchant.id}")).to_be_visible()
    await expect(page.locator("#new-merchant, .postback-url, .edit-link")).to_have_count(0)
    await page.click(".merchant-name")
    await expect(page.locator("#merchant-postback")).to_contain_text("Só membros e donos")
    await expect(page.locator("#field-secret")).to_be_disabled()
    await expect(page.locator("#merchant-submit, #delete-merchant, #add-rule")).to_have_count(0)
    assert token not in await page.content()
    assert HOTTOK not in await page.content()

    await page.goto(f"/w/{owner.workspace.id}/postbacks")
    await expect(page.locator(".log-entry")).to_have_count(2)
    await expect(page.locator(".replay-select, #replay-submit")).to_have_count(0)
    await page.goto(f"/w/{owner.workspace.id}/postbacks/{failed['postback_id']}")
    await expect(page.locator("#replay-one, #fix-hint")).to_have_count(0)
    await page.goto(f"/w/{owner.workspace.id}/conversions/{orphan['conversion_id']}")
    await expect(page.locator("#attach")).to_have_count(0)
    await page.goto(f"/w/{owner.workspace.id}/event-types")
    await expect(page.locator("#event-type-submit, .save-event-type")).to_have_count(0)
    await expect(page.locator("#event-type-SALE [name=counts_as_revenue]")).to_be_disabled()
    csrf = await page.locator("body").get_attribute("hx-headers")
    assert csrf is not None
    response = await page.request.post(
        f"/w/{owner.workspace.id}/postbacks/replay",
        form={"ids": failed["postback_id"]},
        headers={"X-CSRF-Token": csrf.split('"')[3]},
    )
    assert response.status == 403
    assert len(await fetch_all(db, postback_log)) == 2


async def test_a_test_postback_goes_through_the_real_pipeline(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    merchant = await make_merchant(db, owner.workspace, secret=HOTTOK)
    _, click_id = await make_click(db, live_server, owner.workspace)
    await page.goto(f"/w/{owner.workspace.id}/merchants/{merchant.id}")

    await page.fill("#field-trial_click_id", click_id)
    await page.fill("#field-trial_value", "150,00")
    await page.fill("#field-trial_txid", "TESTE-1")
    await page.click("#trial-submit")

    result = page.locator("#trial-result")
    await expect(result.locator(".badge")).to_have_text("Casado")
    request = page.locator("#trial-request")
    await expect(request).to_contain_text("POST /pb/hotmart?token=********")
    await expect(request).to_contain_text(f'"sck": "{click_id}"')
    assert HOTTOK not in await page.content()
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["txid"], conversion["value_minor"], conversion["merchant_id"]) == (
        "TESTE-1",
        15000,
        merchant.id,
    )
    await page.select_option("#field-trial_status", "refunded")
    await page.click("#trial-submit")
    await expect(result.locator(".badge")).to_have_text("Status alterado")
    await page.click("#trial-entry")
    await expect(page.locator("#entry-facts")).to_contain_text("Reembolsada")
