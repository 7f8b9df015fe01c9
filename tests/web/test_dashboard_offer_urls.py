"""The dashboard's campaign form refuses an offer URL whose host a visitor's value would choose,
and says why in the reader's language."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp
from trilha.db.schema import campaigns


async def test_it_refuses_a_macro_in_the_offer_urls_host(app: TrilhaApp, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    browser, csrf = await signed_in(app, db, owner.user)

    async with browser:
        response = await browser.post(
            f"/w/{workspace.id}/campaigns",
            data={
                "csrf_token": csrf,
                "name": "LP",
                "slug": "lp",
                "offer_url": "https://offer.example{sub1}/x",
                "status": "active",
            },
        )

    assert response.status_code == 422
    assert "o domínio não pode ter macro (nem o usuário ou a porta)" in response.text
    assert await fetch_all(db, campaigns) == []
