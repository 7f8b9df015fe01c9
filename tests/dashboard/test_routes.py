"""The dashboard stays out of the OpenAPI schema, and docs/dashboard.md names every page."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi.routing import APIRoute

from trilha.web.dashboard import SECTIONS

DOCS = Path(__file__).parent.parent.parent / "docs" / "dashboard.md"


async def test_it_keeps_dashboard_pages_out_of_the_openapi_schema(
    client: httpx.AsyncClient,
) -> None:
    paths = (await client.get("/api/openapi.json")).json()["paths"]
    assert not [path for path in paths if not path.startswith("/api/")]


def test_it_documents_every_route() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    routes = [route for section in SECTIONS for route in section.router.routes]
    assert len(routes) > 30
    for route in routes:
        assert isinstance(route, APIRoute)
        for method in route.methods or ():
            assert f"| `{method} {route.path}` |" in docs


async def test_it_sends_a_stranger_to_the_sign_in_page(client: httpx.AsyncClient) -> None:
    response = await client.get("/w/abc/campaigns")
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=/w/abc/campaigns"


async def test_it_serves_the_vendored_files_with_their_licences(
    client: httpx.AsyncClient,
) -> None:
    for name in ("htmx.min.js", "htmx.LICENSE", "pico.jade.min.css", "pico.LICENSE.md"):
        response = await client.get(f"/static/vendor/{name}")
        assert response.status_code == 200, name
