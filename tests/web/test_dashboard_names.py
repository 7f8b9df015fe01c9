"""Values shown as the page's language and their makers write them: a click's device in a report
and on its page, a tracker's name."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign
from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp

IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148 Safari/604.1"


async def test_a_phone_is_a_celular_in_a_report_and_on_its_click(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="lp")
    assert (await client.get("/r/lp", headers={"user-agent": IPHONE})).status_code == 302
    [click] = await fetch_clicks(db)
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        report = await browser.get(f"/w/{workspace.id}/reports?preset=today&group_by=device")
        detail = await browser.get(f"/w/{workspace.id}/clicks/{click['id']}")

    assert click["device_type"] == "mobile"
    for page in (report, detail):
        assert page.status_code == 200
        assert "Celular" in page.text
        assert ">mobile<" not in page.text
        assert "mobile ·" not in page.text


async def test_trackers_are_named_as_their_makers_write_them(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        listed = await browser.get(f"/w/{workspace.id}/destinations")
        form = await browser.get(f"/w/{workspace.id}/destinations/new?template=redtrack")

    assert ">RedTrack</a>" in listed.text
    assert 'value="RedTrack"' in form.text
    assert "Redtrack" not in listed.text + form.text
