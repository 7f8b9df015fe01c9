"""Every dashboard page, with data on it, fits the screen from a wide monitor down to a phone: the
document never scrolls sideways, and each table shows its first three columns without scrolling
(a wider table scrolls inside its own box, never the page). The walk of every page at each of
WIDTHS is in tests/dashboard/test_every_page.py; the menu and the filters are checked here."""

from __future__ import annotations

from playwright.async_api import Page, expect

from tests.dashboard.conftest import BROWSER, Account

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
