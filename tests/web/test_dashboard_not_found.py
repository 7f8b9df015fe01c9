"""What the dashboard answers for something that does not exist: its error page, in the
reader's language, never the API's JSON; the API keeps answering JSON."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.browsers import browser, signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp

MISSING = ("clicks", "deliveries", "destinations", "reconciliation", "conversions", "campaigns")


@pytest.mark.parametrize("section", MISSING)
async def test_it_shows_a_missing_thing_on_a_page_in_portuguese(
    app: TrilhaApp, db: AsyncEngine, section: str
) -> None:
    owner, workspace = await make_owner(db)
    page, _ = await signed_in(app, db, owner.user)

    async with page:
        response = await page.get(f"/w/{workspace.id}/{section}/nope")

    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "Página não encontrada" in response.text
    assert "não encontrad" in _message(response)
    assert "not found" not in response.text.lower()


@pytest.mark.parametrize("path", ["/nope", "/w/nope/clicks/x/y", "/settings/nope"])
async def test_it_answers_an_unknown_address_with_a_page_in_the_browsers_language(
    app: TrilhaApp, path: str
) -> None:
    async with browser(app) as portuguese, browser(app, locale="en-US") as english:
        in_portuguese = await portuguese.get(path)
        in_english = await english.get(path)

    assert in_portuguese.status_code == in_english.status_code == 404
    assert "Página não encontrada" in in_portuguese.text
    assert _message(in_portuguese) == "nenhuma página neste endereço; confira o link"
    assert _message(in_english) == "no page at this address"
    assert "detail" not in in_portuguese.text


async def test_the_api_keeps_answering_json_for_an_unknown_address(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/api/v1/nope")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not Found"}


def _message(response: httpx.Response) -> str:
    start = response.text.index('id="error-message">') + len('id="error-message">')
    return response.text[start : response.text.index("</p>", start)]
