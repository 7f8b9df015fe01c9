"""/workspaces: the caller's workspaces. The postback token shows only in one member's view."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign, make_workspace
from tests.web.callers import join, make_caller, make_member, make_owner
from trilha.db.schema import campaigns, memberships, workspaces
from trilha.workspaces import Role


async def test_it_lists_the_callers_workspaces_with_their_role(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller, owned = await make_owner(db, name="Alpha")
    shared = await make_workspace(db, name="Beta")
    await make_workspace(db, name="Not mine")
    await join(db, shared, caller.user, Role.VIEWER)

    response = await client.get("/api/v1/workspaces", headers=caller.headers)

    assert response.status_code == 200
    assert [(w["id"], w["name"], w["role"]) for w in response.json()] == [
        (owned.id, "Alpha", "owner"),
        (shared.id, "Beta", "viewer"),
    ]
    assert owned.postback_token not in response.text
    assert shared.postback_token not in response.text
    assert "postback_url" not in response.json()[0]


async def test_it_makes_the_creator_the_owner(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller = await make_caller(db)

    response = await client.post(
        "/api/v1/workspaces",
        json={"name": "Loja", "timezone": "America/Recife", "currency": "usd"},
        headers=caller.headers,
    )

    assert response.status_code == 201
    body = response.json()
    assert (body["name"], body["timezone"], body["currency"], body["role"]) == (
        "Loja",
        "America/Recife",
        "USD",
        "owner",
    )
    [row] = await fetch_all(db, workspaces, id=body["id"])
    assert row["postback_token"] not in response.text
    [membership] = await fetch_all(db, memberships, workspace_id=body["id"])
    assert (membership["user_id"], membership["role"]) == (caller.user.id, "owner")


async def test_it_answers_422_with_field_messages_for_a_bad_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)

    response = await client.post(
        "/api/v1/workspaces",
        json={"name": "X", "timezone": "Mars/Olympus"},
        headers=caller.headers,
    )

    assert response.status_code == 422
    assert "unknown time zone" in response.json()["errors"]["timezone"]
    assert await fetch_all(db, workspaces) == []


@pytest.mark.parametrize("role", [Role.OWNER, Role.MEMBER])
async def test_it_shows_the_postback_url_to_members_and_owners(
    client: httpx.AsyncClient, db: AsyncEngine, role: Role
) -> None:
    workspace = await make_workspace(db)
    caller = await make_member(db, workspace, role)

    response = await client.get(f"/api/v1/workspaces/{workspace.id}", headers=caller.headers)

    assert response.status_code == 200
    assert response.json()["postback_url"] == (
        f"http://testserver/postback?token={workspace.postback_token}"
    )
    assert response.json()["role"] == role.value


async def test_it_hides_the_postback_url_from_viewers(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    viewer = await make_member(db, workspace, Role.VIEWER)

    response = await client.get(f"/api/v1/workspaces/{workspace.id}", headers=viewer.headers)

    assert response.status_code == 200
    assert response.json()["postback_url"] is None
    assert workspace.postback_token not in response.text


async def test_it_answers_404_for_a_workspace_the_caller_is_not_in(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    other = await make_workspace(db)

    responses = [
        await client.get(f"/api/v1/workspaces/{other.id}", headers=caller.headers),
        await client.patch(
            f"/api/v1/workspaces/{other.id}", json={"name": "Mine"}, headers=caller.headers
        ),
        await client.delete(f"/api/v1/workspaces/{other.id}", headers=caller.headers),
        await client.post(
            f"/api/v1/workspaces/{other.id}/postback-token/rotate", headers=caller.headers
        ),
    ]

    assert [r.status_code for r in responses] == [404] * 4
    assert {r.json()["detail"] for r in responses} == {"workspace not found"}
    [row] = await fetch_all(db, workspaces, id=other.id)
    assert (row["name"], row["postback_token"]) == (other.name, other.postback_token)


async def test_it_lets_the_owner_change_the_settings(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller, workspace = await make_owner(db, fallback_url="https://home.example.com/")

    response = await client.patch(
        f"/api/v1/workspaces/{workspace.id}",
        json={"name": "Renamed", "currency": "EUR"},
        headers=caller.headers,
    )

    assert response.status_code == 200
    assert (response.json()["name"], response.json()["currency"]) == ("Renamed", "EUR")
    assert workspace.postback_token not in response.text
    [row] = await fetch_all(db, workspaces, id=workspace.id)
    assert (row["name"], row["currency"], row["timezone"], row["fallback_url"]) == (
        "Renamed",
        "EUR",
        "America/Sao_Paulo",
        "https://home.example.com/",
    )


async def test_it_clears_the_fallback_url_when_sent_null(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller, workspace = await make_owner(db, fallback_url="https://home.example.com/")

    response = await client.patch(
        f"/api/v1/workspaces/{workspace.id}", json={"fallback_url": None}, headers=caller.headers
    )

    assert response.json()["fallback_url"] is None
    [row] = await fetch_all(db, workspaces, id=workspace.id)
    assert row["fallback_url"] is None


async def test_it_refuses_a_fallback_url_that_is_not_http(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller, workspace = await make_owner(db)

    response = await client.patch(
        f"/api/v1/workspaces/{workspace.id}",
        json={"fallback_url": "javascript:alert(1)"},
        headers=caller.headers,
    )

    assert response.status_code == 422
    assert response.json()["errors"] == {"fallback_url": "must start with http:// or https://"}


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
async def test_it_lets_only_owners_change_delete_or_rotate(
    client: httpx.AsyncClient, db: AsyncEngine, role: Role
) -> None:
    workspace = await make_workspace(db, name="Kept")
    caller = await make_member(db, workspace, role)
    url = f"/api/v1/workspaces/{workspace.id}"

    responses = [
        await client.patch(url, json={"name": "Taken"}, headers=caller.headers),
        await client.delete(url, headers=caller.headers),
        await client.post(f"{url}/postback-token/rotate", headers=caller.headers),
    ]

    assert [r.status_code for r in responses] == [403] * 3
    assert responses[0].json() == {"detail": "this needs the owner role in the workspace"}
    assert all(workspace.postback_token not in r.text for r in responses)
    [row] = await fetch_all(db, workspaces, id=workspace.id)
    assert (row["name"], row["postback_token"]) == ("Kept", workspace.postback_token)


async def test_it_deletes_a_workspace_with_everything_in_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller, workspace = await make_owner(db)
    await make_campaign(db, workspace)

    response = await client.delete(f"/api/v1/workspaces/{workspace.id}", headers=caller.headers)

    assert response.status_code == 204
    assert await fetch_all(db, workspaces, id=workspace.id) == []
    assert await fetch_all(db, campaigns, workspace_id=workspace.id) == []
    assert await fetch_all(db, memberships, workspace_id=workspace.id) == []


async def test_it_rotates_the_postback_token(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller, workspace = await make_owner(db)
    url = f"/api/v1/workspaces/{workspace.id}"

    rotated = await client.post(f"{url}/postback-token/rotate", headers=caller.headers)
    detail = await client.get(url, headers=caller.headers)

    assert rotated.status_code == 200
    [row] = await fetch_all(db, workspaces, id=workspace.id)
    assert row["postback_token"] != workspace.postback_token
    assert row["postback_token"] not in rotated.text  # read it from GET, the one place it shows
    assert detail.json()["postback_url"].endswith(f"?token={row['postback_token']}")
