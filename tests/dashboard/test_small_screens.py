"""The dashboard on a phone and outside a secure context: nothing runs off the screen, the copy
buttons still copy, and the browser finds the icon."""

from __future__ import annotations

from playwright.async_api import BrowserContext, Page, ViewportSize, expect

from tests.dashboard.conftest import BROWSER, Account

pytestmark = BROWSER

# The element reaching furthest right, to name in a failure.
WIDEST = """[...document.querySelectorAll("body *")].filter(e => {
    for (let p = e.parentElement; p; p = p.parentElement) {
        if (getComputedStyle(p).overflowX !== "visible") return false;
    }
    return true;
}).map(e => [e.getBoundingClientRect().right, e.tagName + "." + e.className + "#" + e.id])
    .sort((a, b) => b[0] - a[0]).slice(0, 3)"""
PHONE: ViewportSize = {"width": 390, "height": 844}


async def test_no_page_runs_wider_than_a_phone(page: Page, owner: Account) -> None:
    await page.set_viewport_size(PHONE)
    workspace = f"/w/{owner.workspace.id}"
    for path in (
        workspace,
        f"{workspace}/campaigns",
        f"{workspace}/postbacks",
        f"{workspace}/settings",
    ):
        await page.goto(path)
        width = await page.evaluate("document.documentElement.scrollWidth")
        widest = await page.evaluate(WIDEST)
        assert width <= PHONE["width"], f"{path} is {width} px wide: {widest}"


async def test_a_copy_button_copies_without_the_clipboard_api(
    context: BrowserContext, owner: Account
) -> None:
    # Served over plain HTTP from another host, a page gets no navigator.clipboard.
    await context.add_init_script(
        "Object.defineProperty(navigator, 'clipboard', {value: undefined})"
    )
    page = await context.new_page()
    await page.goto(f"/w/{owner.workspace.id}/settings")
    button = page.locator("#postback-url ~ [data-copy], [data-copy]").first
    label = await button.inner_text()

    await button.click()

    await expect(button).not_to_have_text(label)
    copied = await page.evaluate("window.getSelection().toString()")
    assert copied == await button.get_attribute("data-copy")


async def test_the_browser_finds_the_icon(page: Page, owner: Account) -> None:
    await page.goto(f"/w/{owner.workspace.id}/campaigns")
    icon = await page.evaluate("document.querySelector('link[rel=icon]').getAttribute('href')")
    assert icon is not None

    for path in (icon, "/favicon.ico"):
        response = await page.request.get(path)
        assert response.status == 200, path
        assert response.headers["content-type"].startswith("image/"), path
