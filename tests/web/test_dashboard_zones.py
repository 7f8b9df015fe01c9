"""A time zone select offers Brazil's zones first, then the others by region, each with its
offset and its city's name in the reader's language, instead of every raw IANA name."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp
from trilha.db.schema import users

MINUS = "\N{MINUS SIGN}"  # offsets are written with a true minus sign
GROUP = re.compile(r'<optgroup label="([^"]+)">')
OPTION = re.compile(r'<option value="([^"]+)"( selected)?>([^<]+)</option>')


@pytest.mark.parametrize("page", ["/workspaces/new", "/w/{id}/settings", "/w/{id}/reports"])
async def test_brazils_zones_come_first_then_each_region_with_offsets(
    app: TrilhaApp, db: AsyncEngine, page: str
) -> None:
    owner, workspace = await make_owner(db)
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        response = await browser.get(page.format(id=workspace.id))

    assert response.status_code == 200
    select = _zone_select(response.text)
    groups = GROUP.findall(select)
    assert groups[:3] == ["Brasil", "África", "América"]
    assert "Europa" in groups
    options = OPTION.findall(select)
    assert options[0] == ("America/Sao_Paulo", " selected", f"(UTC{MINUS}03:00) São Paulo")
    brazil = select.split("</optgroup>")[0]
    assert f"(UTC{MINUS}04:00) Manaus" in brazil
    assert f"(UTC{MINUS}02:00) Fernando de Noronha" in brazil
    assert {zone for zone, _, _ in options}.isdisjoint({"Brazil/East", "America/Buenos_Aires"})
    assert len(options) < 500
    assert all(re.match(rf"\(UTC[{MINUS}+]\d\d:\d\d\) ", label) for _, _, label in options)


async def test_a_zone_select_speaks_english_to_an_english_reader(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    async with db.begin() as conn:
        await conn.execute(update(users).where(users.c.id == owner.user.id).values(locale="en"))
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        response = await browser.get(f"/w/{workspace.id}/settings")

    select = _zone_select(response.text)
    assert GROUP.findall(select)[:3] == ["Brazil", "Africa", "Americas"]
    assert '<option value="Asia/Kolkata">(UTC+05:30) Kolkata</option>' in select


def _zone_select(page: str) -> str:
    start = re.search(r'<select[^>]*name="timezone"', page)
    assert start is not None
    return page[start.start() : page.index("</select>", start.start())]
