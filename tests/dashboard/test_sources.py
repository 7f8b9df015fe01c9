"""Traffic sources in the browser: ad networks' mappings, mapping rows and their errors."""

from __future__ import annotations

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.factories import fetch_all, make_source
from trilha.campaigns import ParamMapping
from trilha.db.schema import traffic_sources

pytestmark = BROWSER


async def test_the_facebook_mapping_prefills_the_rows(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/sources")
    await page.click(".empty-state [role=button]")
    await page.click("#network-facebook")

    await expect(page.locator("#field-name")).to_have_value("Facebook Ads")
    await expect(page.locator("#network-hint")).to_contain_text("ad_id={{ad.id}}")
    await page.click("#source-submit")

    await expect(page.locator("#flash")).to_contain_text("Fonte Facebook Ads criada")
    [row] = await fetch_all(db, traffic_sources)
    assert {"param": "adset_id", "field": "adset_id"} in row["params"]
    assert {"param": "campaign_name", "field": "utm_campaign"} in row["params"]
    await expect(page.locator("#sources")).to_contain_text("campaign_name")


async def test_rows_are_added_edited_and_checked(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    source = await make_source(
        db, owner.workspace, name="Native", params=(ParamMapping("cid", "ad_id"),)
    )
    await page.goto(f"/w/{owner.workspace.id}/sources/{source.id}")
    await page.click("#add-row")
    await expect(page.locator(".mapping-row")).to_have_count(3)

    params = page.locator("input[name=param]")
    await params.nth(1).fill("cid")
    await page.click("#source-submit")

    await expect(page.locator(".field-error")).to_have_text("'cid' aparece duas vezes")
    await page.locator("input[name=param]").nth(1).fill("zone")
    await page.locator("select[name=field]").nth(1).select_option("site_id")
    await page.click("#source-submit")

    await expect(page.locator("#flash")).to_contain_text("Fonte Native salva")
    [row] = await fetch_all(db, traffic_sources)
    assert row["params"] == [
        {"param": "cid", "field": "ad_id"},
        {"param": "zone", "field": "site_id"},
    ]
