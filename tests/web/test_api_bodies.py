"""What the API does with a body it cannot read: a clear 422, never a 500, nothing stored."""

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
    ("body", "message"),
    [
        ('{"name": "Facebook \\ud800"}', "lone UTF-16 surrogate"),
        ('{"name": "Facebook", "params": [{"\\udc00": "ad_id"}]}', "lone UTF-16 surrogate"),
        ('{"name": ', "not valid JSON: Expecting value"),
    ],
)
async def test_a_body_that_is_no_json_text_answers_422(
    client: httpx.AsyncClient, db: AsyncEngine, body: str, message: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        f"/api/v1/workspaces/{workspace.id}/sources",
        content=body.encode(),
        headers={**owner.headers, "content-type": "application/json"},
    )

    assert response.status_code == 422
    assert message in response.json()["errors"]["body"]
    assert await fetch_all(db, traffic_sources) == []
