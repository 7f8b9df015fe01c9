"""The postback log in the browser: outcomes and reasons, filters and pages, an entry's stored
request with its secrets masked, and replaying what failed after fixing the mapping."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account, screenshot, sign_in
from tests.dashboard.sales import (
    HOTTOK,
    hotmart_sale,
    make_click,
    make_merchant,
    send_generic,
    send_hotmart,
)
from tests.factories import fetch_all
from trilha.db.schema import conversions, postback_log, workspaces
from trilha.web.auth import SESSION_COOKIE
from trilha.web.dashboard import postback_log as log_pages
from trilha.web.dashboard.pages import FLASH_COOKIE

pytestmark = BROWSER


async def test_an_invalid_postback_is_replayed_after_adding_its_event_type(
    page: Page, db: AsyncEngine, owner: Account, live_server: str, tmp_path: Path
) -> None:
    _, click_id = await make_click(db, live_server, owner.workspace)
    failed = await send_generic(
        live_server, owner.workspace, click_id=click_id, tipo="trial", payout="0", txid="T-1"
    )
    await send_generic(live_server, owner.workspace, click_id="nao-existe", txid="T-2")
    await page.goto(f"/w/{owner.workspace.id}/postbacks")

    invalid = page.locator(f"#entry-{failed['postback_id']}")
    await expect(invalid.locator(".badge")).to_have_text("Inválido")
    await expect(invalid.locator(".reason")).to_have_text(
        "tipo de evento 'TRIAL' desconhecido; adicione-o em Tipos de evento"
    )
    await expect(page.locator(".log-entry[data-outcome=orphan] .badge")).to_have_text("Órfão")
    await expect(page.locator(".replay-select")).to_have_count(2)
    await screenshot(page, "trilha-postback-log.png", tmp_path)

    await page.goto(f"/w/{owner.workspace.id}/event-types")
    await page.fill("#field-name", "trial")
    await page.click("#event-type-submit")
    await expect(page.locator("#flash")).to_contain_text("Tipo de evento TRIAL criado")
    await page.click("nav.sections >> text=Postbacks S2S")
    await invalid.locator(".replay-select").check()
    await page.click("#replay-submit")

    result = page.locator(f".replay-result[data-original='{failed['postback_id']}']")
    await expect(result.locator(".badge")).to_have_text("Casado")
    await expect(page.locator(".log-entry")).to_have_count(3)
    [conversion] = await fetch_all(db, conversions, event_type="TRIAL")
    assert conversion["click_id"] == click_id
    await result.locator(".replay-entry").click()
    await expect(page.locator("#replay-of-link")).to_be_visible()
    await page.click("#conversion-link")
    await expect(page.locator("#conversion-click")).to_have_text(click_id)


async def test_an_entry_shows_the_stored_request_without_token_or_secret(
    page: Page, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    merchant = await make_merchant(db, owner.workspace, secret=HOTTOK)
    _, click_id = await make_click(db, live_server, owner.workspace)
    url = merchant.postback_url(live_server, owner.workspace.postback_token)
    await send_hotmart(url, hotmart_sale(click_id, txid="HP-77", value=297.0))
    repeat = await send_hotmart(url, hotmart_sale(click_id, txid="HP-77", value=197.0))

    await page.goto(f"/w/{owner.workspace.id}/postbacks/{repeat['postback_id']}")

    await expect(page.locator("h2 .badge")).to_have_text("Duplicado")
    request = page.locator("#request-text")
    await expect(request).to_contain_text("POST /pb/hotmart?token=********")
    await expect(request).to_contain_text("x-hotmart-hottok: ********")
    await expect(request).to_contain_text('    "purchase": {\n      "transaction": "HP-77",')
    details = page.locator("#entry-details")
    await expect(details.locator("[data-detail=stored_value] td")).to_have_text("R$ 297,00")
    await expect(details.locator("[data-detail=received_value] td")).to_have_text("R$ 197,00")
    html = await page.content()
    assert owner.workspace.postback_token not in html
    assert HOTTOK not in html
    [entry] = await fetch_all(db, postback_log, id=repeat["postback_id"])
    assert json.loads(entry["body"])["hottok"] == "********"
    await page.click("#conversion-link")
    await expect(page.locator("h2")).to_contain_text("R$ 297,00")


async def test_the_log_is_filtered_and_paged_newest_first(
    page: Page, db: AsyncEngine, owner: Account, live_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(log_pages, "PAGE_SIZE", 2)
    for n in range(3):
        await send_generic(live_server, owner.workspace, click_id=f"orfao-{n}", txid=f"T{n}")
    await send_generic(live_server, owner.workspace, tipo="venda", txid="SEM-CLIQUE")
    await page.goto(f"/w/{owner.workspace.id}/postbacks")

    await expect(page.locator(".log-entry")).to_have_count(2)
    await expect(page.locator(".log-entry").first).to_contain_text("SEM-CLIQUE")
    await page.click("#older")
    await expect(page.locator(".log-entry")).to_have_count(2)
    await expect(page.locator(".log-entry").last).to_contain_text("orfao-0")
    await expect(page.locator("#older")).to_have_count(0)

    await page.select_option("#filter-outcome", "orphan")
    await page.fill("#filter-click_id", "orfao-1")
    await page.click("#filter-submit")
    await expect(page.locator(".log-entry")).to_have_count(1)
    await expect(page.locator(".log-entry")).to_contain_text("orfao-1")
    await page.select_option("#filter-outcome", "invalid")
    await page.click("#filter-submit")
    await expect(page.locator(".empty-state")).to_contain_text("Nada encontrado")


async def test_an_entry_whose_json_escapes_are_no_text_shows_the_body_as_received(
    page: Page, owner: Account, live_server: str
) -> None:
    body = '{"click_id": "abc", "txid": "\\ud800"}'
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{live_server}/pb",
            params={"token": owner.workspace.postback_token},
            content=body,
            headers={"content-type": "application/json"},
        )
    assert response.status_code == 400
    entry_id = response.json()["postback_id"]

    await page.goto(f"/w/{owner.workspace.id}/postbacks/{entry_id}")

    await expect(page.locator("h2 .badge")).to_have_text("Inválido")
    await expect(page.locator("#request-text")).to_contain_text(body)


async def test_a_flash_message_that_is_no_text_is_dropped(
    page: Page, owner: Account, live_server: str
) -> None:
    flash = base64.urlsafe_b64encode(b'{"kind": "ok", "text": "\\ud800"}').decode()
    await page.context.add_cookies([{"name": FLASH_COOKIE, "value": flash, "url": live_server}])

    response = await page.goto(f"/w/{owner.workspace.id}/campaigns")

    assert response is not None
    assert response.status == 200
    await expect(page.locator("#flash")).to_have_count(0)


@pytest.mark.parametrize(
    ("timezone", "query"),
    [
        ("America/Sao_Paulo", {"until": "9999-12-31"}),  # the calendar's last day has no next
        ("Asia/Tokyo", {"since": "0001-01-01"}),  # its midnight is still year 0 in UTC
    ],
)
async def test_a_day_filter_at_the_calendars_ends_bounds_nothing(
    db: AsyncEngine,
    context: BrowserContext,
    owner: Account,
    live_server: str,
    timezone: str,
    query: dict[str, str],
) -> None:
    async with db.begin() as conn:
        await conn.execute(
            update(workspaces)
            .where(workspaces.c.id == owner.workspace.id)
            .values(timezone=timezone)
        )
    await send_generic(live_server, owner.workspace, click_id="orfao-1", txid="T1")
    session = await sign_in(db, context, owner.user, live_server)

    async with httpx.AsyncClient(cookies={SESSION_COOKIE: session}) as client:
        response = await client.get(f"{live_server}/w/{owner.workspace.id}/postbacks", params=query)

    assert response.status_code == 200
    assert "orfao-1" in response.text
