"""Every dashboard page, with data on it, fits the screen from a wide monitor down to a phone: the
document never scrolls sideways, and each table shows its first three columns without scrolling
(a wider table scrolls inside its own box, never the page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.async_api import BrowserContext, Page, ViewportSize, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, SCREENSHOTS, Account, screenshot
from tests.dashboard.test_portuguese_pages import put_data_in_place, upload_reconciliation

pytestmark = BROWSER

WIDTHS = (1920, 1280, 1024, 390)
# The three elements reaching furthest right outside any box that scrolls, each named by its tag,
# class, id and the start of its text.
WIDEST = """[...document.querySelectorAll("body *")].filter(e => {
    for (let p = e.parentElement; p; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== "visible") return false;
    }
    return true;
}).map(e => [Math.round(e.getBoundingClientRect().right),
             `${e.tagName}.${e.className}#${e.id} "${e.textContent.trim().slice(0, 30)}"`])
    .sort((a, b) => b[0] - a[0]).slice(0, 3)"""
# The headers of a table's first three columns that lie outside the viewport or are clipped by
# a box the table scrolls in, each with its text.
HIDDEN_HEADERS = """() => {
    const hidden = [];
    for (const table of document.querySelectorAll("main table")) {
        if (!table.checkVisibility()) continue;
        const head = table.querySelector("thead tr:last-child");
        if (!head) continue;
        let right = window.innerWidth;
        for (let p = table.parentElement; p; p = p.parentElement) {
            if (getComputedStyle(p).overflowX !== "visible") {
                right = Math.min(right, p.getBoundingClientRect().right);
            }
        }
        for (const cell of [...head.cells].slice(0, 3)) {
            const box = cell.getBoundingClientRect();
            if (box.left < 0 || box.right > right + 1) {
                hidden.push((table.id || table.className) + ": " + cell.textContent.trim());
            }
        }
    }
    return hidden;
}"""
SHOWN = {"home": "", "campaigns": "/campaigns", "report": "/reports"}


async def misfits(page: Page, width: int) -> list[str]:
    """What does not fit the page at this width: its own width, hidden headers."""
    found = []
    document = await page.evaluate("document.documentElement.scrollWidth")
    if document > width:
        widest = await page.evaluate(WIDEST)
        found.append(f"the document is {document} px wide: {widest}")
    found += [f"header off-screen: {header}" for header in await page.evaluate(HIDDEN_HEADERS)]
    return found


@pytest.mark.parametrize("language", ["pt-BR", "en"])
async def test_every_page_fits_the_screen_at_every_width(
    context: BrowserContext,
    db: AsyncEngine,
    owner: Account,
    live_server: str,
    tmp_path: Path,
    language: str,
) -> None:
    data = await put_data_in_place(db, owner, live_server)
    w = f"/w/{owner.workspace.id}"
    page = await context.new_page()
    reconciliation = await upload_reconciliation(page, w, data["merchant"], tmp_path)
    if language == "en":  # English labels are of other lengths: the menu and headers differ
        await page.click("#lang-en")
        await expect(page.locator("html")).to_have_attribute("lang", "en")
    paths = [
        "/",
        "/workspaces/new",
        w,
        f"{w}/reports",
        f"{w}/reports?group_by=day&group_by=campaign",
        f"{w}/campaigns",
        f"{w}/campaigns/new",
        f"{w}/campaigns/{data['campaign']}",
        f"{w}/campaigns/{data['campaign']}/costs",
        f"{w}/sources",
        f"{w}/sources/new",
        f"{w}/sources/{data['source']}",
        f"{w}/clicks",
        f"{w}/clicks/{data['click']}",
        f"{w}/merchants",
        f"{w}/merchants/new?preset=hotmart",
        f"{w}/merchants/{data['merchant']}",
        f"{w}/postbacks",
        *(f"{w}/postbacks/{entry}" for entry in data["entries"][:2]),
        f"{w}/conversions",
        f"{w}/conversions/{data['conversions'][0]}",
        f"{w}/event-types",
        f"{w}/domains",
        f"{w}/reconciliation",
        reconciliation,
        f"{w}/destinations",
        f"{w}/destinations/new",
        f"{w}/destinations/{data['destination']}",
        f"{w}/deliveries",
        f"{w}/deliveries/{data['deliveries'][0]}",
        f"{w}/settings",
    ]
    problems: dict[str, list[str]] = {}
    for width in WIDTHS:
        viewport: ViewportSize = {"width": width, "height": 900 if width > 390 else 844}
        await page.set_viewport_size(viewport)
        for path in paths:
            response = await page.goto(path)
            assert response is not None, path
            assert response.status == 200, path
            if found := await misfits(page, width):
                problems[f"{path} at {width} px"] = found
        if SCREENSHOTS and width in (1280, 390):
            for name, tail in SHOWN.items():
                await page.goto(w + tail)
                await screenshot(page, f"{name}-{width}-{language}.png", tmp_path)
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)


async def test_the_menu_keeps_each_section_on_one_line_and_folds_on_a_phone(
    page: Page, owner: Account
) -> None:
    await page.set_viewport_size({"width": 1024, "height": 768})
    await page.goto(f"/w/{owner.workspace.id}")
    links = page.locator("#sections a")
    await expect(links).to_have_count(12)
    heights = await links.evaluate_all("links => links.map(a => a.getBoundingClientRect().height)")
    assert max(heights) < 1.5 * min(heights), heights  # no label wraps
    await expect(page.locator("#menu-toggle")).to_be_hidden()

    await page.set_viewport_size({"width": 390, "height": 844})
    await expect(page.locator("#sections")).to_be_hidden()
    await page.click("#menu-toggle")
    await expect(page.locator("#menu-toggle")).to_have_attribute("aria-expanded", "true")
    await page.click("#sections >> text=Campanhas")
    await expect(page).to_have_url(f"/w/{owner.workspace.id}/campaigns")
    await expect(page.locator("#sections")).to_be_hidden()


async def test_the_filters_fold_on_a_phone_until_opened(page: Page, owner: Account) -> None:
    await page.set_viewport_size({"width": 390, "height": 844})
    await page.goto(f"/w/{owner.workspace.id}/postbacks")
    await expect(page.locator("#log-filters")).to_be_hidden()

    await page.click("details.filter-box > summary")

    await expect(page.locator("#log-filters")).to_be_visible()
