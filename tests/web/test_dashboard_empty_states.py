"""Each empty list says what to do next and links to the page that does it."""

from __future__ import annotations

import re

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp

EMPTY_STATE = re.compile(r'<article class="empty-state">.*?</article>', re.DOTALL)


async def test_every_empty_list_links_to_its_next_step(app: TrilhaApp, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    w = f"/w/{workspace.id}"
    next_steps = {
        "campaigns": f"{w}/campaigns/new",
        "merchants": f"{w}/merchants/new",
        "destinations": f"{w}/destinations/new?kind=postback",
        "conversions": f"{w}/merchants",
        "clicks": f"{w}/campaigns",
    }
    browser, _ = await signed_in(app, db, owner.user)
    async with browser:
        for section, step in next_steps.items():
            page = (await browser.get(f"{w}/{section}")).text
            [empty] = EMPTY_STATE.findall(page)
            assert f'href="{step}"' in empty, section
