"""What the API does with a body it cannot read: a clear 400 or 422, never a 500, nothing
stored."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import make_owner
from trilha.db.schema import traffic_sources
from trilha.web.api import RESOURCES, health
from trilha.web.api.routing import ApiRoute


def test_every_api_route_refuses_json_that_is_no_text() -> None:
    routes = [route for module in (health, *RESOURCES) for route in module.router.routes]
    assert len(routes) > 40
    assert [route for route in routes if not isinstance(route, ApiRoute)] == []


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b'{"name": "Facebook \\ud800"}', 400, "lone UTF-16 surrogate"),
        (b'{"name": "Facebook", "params": [{"\\udc00": "ad_id"}]}', 400, "lone UTF-16 surrogate"),
        (b'{"name": "Face\\u0000book"}', 400, "NUL character"),
        (b'{"name": "Facebook", "params": [{"ad\\u0000": "ad_id"}]}', 400, "NUL character"),
        (b'{"name": "Fac\xe9book"}', 400, "not UTF-8"),
        (b'{"name": ', 422, "not valid JSON: Expecting value"),
    ],
)
async def test_a_body_that_is_no_json_text_is_refused(
    client: httpx.AsyncClient, db: AsyncEngine, body: bytes, status: int, message: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        f"/api/v1/workspaces/{workspace.id}/sources",
        content=body,
        headers={**owner.headers, "content-type": "application/json"},
    )

    assert response.status_code == status
    assert message in response.json()["errors"]["body"]
    assert await fetch_all(db, traffic_sources) == []
