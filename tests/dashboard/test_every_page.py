"""Every dashboard page with data on it, walked once per language: at each width it must fit the
screen (tests/dashboard/test_screen_fit.py), and at one of them speak the reader's language
(tests/dashboard/test_portuguese_pages.py). One server, one workspace seeded once and one page
serve both checks: the walks cost most of the browser tests' time, mostly in loading pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import BrowserContext, ViewportSize, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, SCREENSHOTS, Account, screenshot
from tests.dashboard.test_portuguese_pages import (
    MISSING_SECTIONS,
    Untranslated,
    put_data_in_place,
    tell_of_problems,
    upload_reconciliation,
    visible_texts,
)
from tests.dashboard.test_screen_fit import SHOWN, WIDTHS, misfits
from trilha.postbacks.platforms import PRESETS

pytestmark = BROWSER

# The width the language is checked at: between the same breakpoints of the stylesheets (1,280
# and 1,536 px) as a desktop browser's usual 1,360.
LANGUAGE_WIDTH = 1280


def fitted_paths(w: str, data: dict[str, Any], reconciliation: str) -> list[str]:
    """The pages checked at every width: one of each kind."""
    return [
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


def read_paths(w: str, data: dict[str, Any], reconciliation: str) -> list[str]:
    """The pages whose language is checked: every one, each entry, sale, delivery and preset."""
    return [
        "/",
        "/workspaces/new",
        w,
        f"{w}/reports",
        f"{w}/reports?group_by=day&group_by=device&group_by=status",
        f"{w}/reports?preset=custom&first=2026-12-06&last=2026-12-01&sort=x",  # its errors
        f"{w}/campaigns",
        f"{w}/campaigns/new",
        f"{w}/campaigns/{data['campaign']}",
        f"{w}/campaigns/{data['campaign']}/costs",
        f"{w}/sources",
        f"{w}/sources/new",
        f"{w}/sources/new?network=facebook",
        f"{w}/sources/{data['source']}",
        f"{w}/clicks",
        f"{w}/clicks/{data['click']}",
        f"{w}/merchants",
        f"{w}/merchants/new",
        *(f"{w}/merchants/new?preset={name}" for name in PRESETS),  # each one's setup text
        f"{w}/merchants/{data['merchant']}",
        f"{w}/postbacks",
        *(f"{w}/postbacks/{entry}" for entry in data["entries"]),
        f"{w}/conversions",
        *(f"{w}/conversions/{conversion}" for conversion in data["conversions"]),
        f"{w}/event-types",
        f"{w}/domains",
        f"{w}/reconciliation",
        reconciliation,
        f"{w}/destinations",
        f"{w}/destinations/new",
        f"{w}/destinations/{data['destination']}",
        f"{w}/deliveries",
        *(f"{w}/deliveries/{delivery}" for delivery in data["deliveries"]),
        f"{w}/settings",
    ]


@pytest.mark.parametrize("language", ["pt-BR", "en"])
async def test_every_page_with_data_fits_each_width_and_is_in_the_readers_language(
    context: BrowserContext,
    db: AsyncEngine,
    owner: Account,
    live_server: str,
    tmp_path: Path,
    language: str,
) -> None:
    data = await put_data_in_place(db, owner, live_server)
    assert data["deliveries"], "the sales should have been told to the destination"
    await tell_of_problems(db, data)
    w = f"/w/{owner.workspace.id}"
    page = await context.new_page()
    reconciliation = await upload_reconciliation(page, w, data["merchant"], tmp_path)
    if language == "en":  # English labels are of other lengths: the menu and headers differ
        await page.click("#lang-en")
        await expect(page.locator("html")).to_have_attribute("lang", "en")
    fitted = fitted_paths(w, data, reconciliation)
    missing = [*(f"{w}/{section}/nope" for section in MISSING_SECTIONS), "/nope", f"{w}/nope"]
    read = [*read_paths(w, data, reconciliation), *missing]
    untranslated = Untranslated(language)
    misfit: dict[str, list[str]] = {}
    foreign: dict[str, list[str]] = {}
    for width in WIDTHS:
        viewport: ViewportSize = {"width": width, "height": 900 if width > 390 else 844}
        await page.set_viewport_size(viewport)
        shown = [*fitted, *(path for path in read if path not in fitted)]
        for path in shown if width == LANGUAGE_WIDTH else fitted:
            response = await page.goto(path)
            assert response is not None, path
            assert response.status == (
                404 if path in missing else 422 if "sort=x" in path else 200
            ), path
            if path in fitted and (found := await misfits(page, width)):
                misfit[f"{path} at {width} px"] = found
            if width != LANGUAGE_WIDTH or path not in read:
                continue
            if path in missing:  # the dashboard's error page, not the API's JSON
                await expect(page.locator("#error-message")).to_be_visible()
            if found := untranslated.found_in(await visible_texts(page)):
                foreign[path] = found
        if SCREENSHOTS and width in (1280, 390):
            for name, tail in SHOWN.items():
                await page.goto(w + tail)
                await screenshot(page, f"{name}-{width}-{language}.png", tmp_path)
    assert not misfit, json.dumps(misfit, indent=1, ensure_ascii=False)
    assert not foreign, json.dumps(foreign, indent=1, ensure_ascii=False)
    if SCREENSHOTS:
        await page.goto(f"{w}/deliveries")
        await screenshot(page, f"deliveries-{language}.png", tmp_path)
        await page.goto(f"{w}/settings")
        await screenshot(page, f"settings-{language}.png", tmp_path)
