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


async def test_it_names_each_wrong_field_by_its_label_not_its_parameter(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    browser, _ = await signed_in(app, db, owner.user)
    backwards = {"preset": "custom", "first": "2026-12-06", "last": "2026-12-01"}

    async with browser:
        period = await browser.get(f"/w/{workspace.id}/reports", params=backwards)
        sort = await browser.get(f"/w/{workspace.id}/reports", params={"sort": "x"})

    assert period.status_code == sort.status_code == 422
    shown = [_errors(period.text), _errors(sort.text)]
    assert "<strong>Último dia</strong>: deve ser igual ou depois do primeiro dia" in shown[0]
    assert "<strong>Ordenar por</strong>: não é uma métrica" in shown[1]
    assert "<strong>last</strong>" not in shown[0]


def _errors(page: str) -> str:
    return page[page.index('id="report-errors"') :].split("</div>")[0]
