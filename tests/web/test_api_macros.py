"""The macros of offer URLs: the built-in list, and a preview of a filled URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_workspace
from tests.web.callers import make_caller, make_member, make_owner
from trilha.macros import BUILTIN_MACROS
from trilha.workspaces import Role


async def test_it_lists_the_built_in_macros(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller = await make_caller(db)

    response = await client.get("/api/v1/macros", headers=caller.headers)

    assert response.status_code == 200
    assert {m["name"]: m["description"] for m in response.json()} == BUILTIN_MACROS


async def test_it_previews_a_filled_offer_url(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    viewer = await make_member(db, workspace, Role.VIEWER)

    response = await client.post(
        f"/api/v1/workspaces/{workspace.id}/macros/preview",
        json={
            "template": "https://pay.example.com/c?s={sub1}&d={device}&cid={click_id}&x={tpyo}",
            "params": {"sub1": "a b&c"},
        },
        headers=viewer.headers,
    )

    assert response.status_code == 200
    url = response.json()["url"]
    query = parse_qs(urlsplit(url).query)
    assert (query["s"], query["d"]) == (["a b&c"], ["mobile"])
    assert len(query["cid"][0]) == 23
    assert url.endswith("&x={tpyo}")
    assert response.json()["unknown_macros"] == ["tpyo"]


async def test_it_refuses_a_template_that_is_not_an_http_url(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        f"/api/v1/workspaces/{workspace.id}/macros/preview",
        json={"template": "pay.example.com/?s={sub1}"},
        headers=owner.headers,
    )

    assert response.status_code == 422
    assert response.json()["errors"] == {"template": "must start with http:// or https://"}


async def test_it_answers_404_for_a_preview_in_another_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    other = await make_workspace(db)

    response = await client.post(
        f"/api/v1/workspaces/{other.id}/macros/preview",
        json={"template": "https://x.example/"},
        headers=caller.headers,
    )

    assert response.status_code == 404
