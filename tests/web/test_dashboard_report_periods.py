"""The dashboard's report page and its CSV refuse a period past the calendar with 422 and say
why, instead of failing."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp

YEAR_9999 = {"preset": "custom", "first": "9999-01-01", "last": "9999-12-31"}
FIRST_DAY_IN_TOKYO = {
    "preset": "custom",
    "first": "0001-01-01",
    "last": "0001-01-01",
    "timezone": "Asia/Tokyo",
}


async def test_it_explains_a_period_past_the_calendar(app: TrilhaApp, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        for params in (YEAR_9999, FIRST_DAY_IN_TOKYO):
            page = await browser.get(f"/w/{workspace.id}/reports", params=params)
            download = await browser.get(f"/w/{workspace.id}/reports/csv", params=params)

            assert page.status_code == 422, params
            assert "deve ficar entre os anos 1 e 9999 no seu fuso horário" in page.text
            assert download.status_code == 422, params
