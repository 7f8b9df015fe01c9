"""/workspaces/{id}/members: owners add, re-role and remove members; a workspace keeps an owner."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_user, make_workspace
from tests.web.callers import Caller, make_caller, make_member, make_owner
from trilha.db.schema import memberships
from trilha.workspaces import Role, Workspace


def members_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/members"


async def roles(db: AsyncEngine, workspace_id: str) -> dict[str, str]:
    rows = await fetch_all(db, memberships, workspace_id=workspace_id)
    return {row["user_id"]: row["role"] for row in rows}


async def test_it_lists_members_to_any_member(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)

    response = await client.get(members_url(workspace.id), headers=viewer.headers)

    assert response.status_code == 200
    assert {(m["user_id"], m["email"], m["role"]) for m in response.json()} == {
        (owner.user.id, owner.user.email, "owner"),
        (viewer.user.id, viewer.user.email, "viewer"),
    }


async def test_it_adds_an_existing_user_by_email(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    user = await make_user(db, email="joana@example.com")

    response = await client.post(
        members_url(workspace.id),
        json={"email": " Joana@Example.com ", "role": "member"},
        headers=owner.headers,
    )

    assert response.status_code == 201
    assert (response.json()["user_id"], response.json()["role"]) == (user.id, "member")
    assert (await roles(db, workspace.id))[user.id] == "member"


async def test_it_answers_404_with_a_clear_message_for_an_unknown_email(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        members_url(workspace.id),
        json={"email": "nobody@example.com", "role": "viewer"},
        headers=owner.headers,
    )

    assert response.status_code == 404
    assert response.json()["detail"] == (
        "no user with this e-mail; they need an account before joining"
    )
    assert list(await roles(db, workspace.id)) == [owner.user.id]


async def test_it_answers_409_for_someone_already_a_member(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    member = await make_member(db, workspace, Role.VIEWER)

    response = await client.post(
        members_url(workspace.id),
        json={"email": member.user.email, "role": "owner"},
        headers=owner.headers,
    )

    assert response.status_code == 409
    assert response.json()["errors"] == {"email": "this user is already a member"}
    assert (await roles(db, workspace.id))[member.user.id] == "viewer"


async def test_it_refuses_an_unknown_role(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    user = await make_user(db)

    response = await client.post(
        members_url(workspace.id),
        json={"email": user.email, "role": "admin"},
        headers=owner.headers,
    )

    assert response.status_code == 422
    assert "owner" in response.json()["errors"]["role"]


async def test_it_changes_a_members_role(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    member = await make_member(db, workspace, Role.VIEWER)

    response = await client.patch(
        f"{members_url(workspace.id)}/{member.user.id}",
        json={"role": "owner"},
        headers=owner.headers,
    )

    assert response.status_code == 200
    assert (response.json()["user_id"], response.json()["role"]) == (member.user.id, "owner")
    assert (await roles(db, workspace.id))[member.user.id] == "owner"


async def test_it_removes_a_member(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    member = await make_member(db, workspace, Role.MEMBER)

    response = await client.delete(
        f"{members_url(workspace.id)}/{member.user.id}", headers=owner.headers
    )
    after = await client.get(f"/api/v1/workspaces/{workspace.id}", headers=member.headers)

    assert response.status_code == 204
    assert list(await roles(db, workspace.id)) == [owner.user.id]
    assert after.status_code == 404


async def test_it_keeps_the_last_owner(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    url = f"{members_url(workspace.id)}/{owner.user.id}"

    demoted = await client.patch(url, json={"role": "member"}, headers=owner.headers)
    removed = await client.delete(url, headers=owner.headers)

    assert [demoted.status_code, removed.status_code] == [422, 422]
    assert removed.json()["errors"] == {"role": "a workspace needs at least one owner"}
    assert await roles(db, workspace.id) == {owner.user.id: "owner"}


async def test_it_lets_an_owner_step_down_once_another_owner_exists(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    second = await make_member(db, workspace, Role.OWNER)

    response = await client.patch(
        f"{members_url(workspace.id)}/{owner.user.id}",
        json={"role": "viewer"},
        headers=owner.headers,
    )

    assert response.status_code == 200
    assert await roles(db, workspace.id) == {owner.user.id: "viewer", second.user.id: "owner"}


async def test_it_answers_404_for_someone_not_in_the_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    stranger = await make_caller(db)
    url = f"{members_url(workspace.id)}/{stranger.user.id}"

    changed = await client.patch(url, json={"role": "member"}, headers=owner.headers)
    removed = await client.delete(url, headers=owner.headers)

    assert [changed.status_code, removed.status_code] == [404, 404]
    assert stranger.user.id not in await roles(db, workspace.id)


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
async def test_it_lets_only_owners_manage_members(
    client: httpx.AsyncClient, db: AsyncEngine, role: Role
) -> None:
    owner, workspace = await make_owner(db)
    caller = await make_member(db, workspace, role)
    newcomer = await make_user(db)
    url = members_url(workspace.id)

    responses = [
        await client.post(
            url, json={"email": newcomer.email, "role": "owner"}, headers=caller.headers
        ),
        await client.patch(
            f"{url}/{caller.user.id}", json={"role": "owner"}, headers=caller.headers
        ),
        await client.delete(f"{url}/{owner.user.id}", headers=caller.headers),
    ]

    assert [r.status_code for r in responses] == [403] * 3
    assert await roles(db, workspace.id) == {owner.user.id: "owner", caller.user.id: role.value}


async def test_it_answers_404_for_the_members_of_another_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    other = await make_workspace(db)

    response = await client.get(members_url(other.id), headers=caller.headers)

    assert response.status_code == 404


async def _two_owners(db: AsyncEngine) -> tuple[Caller, Caller, Workspace]:
    first, workspace = await make_owner(db)
    return first, await make_member(db, workspace, Role.OWNER), workspace


@pytest.mark.parametrize("move", ["demote the other", "leave"])
async def test_two_owners_stepping_down_at_once_leave_one_owner(
    client: httpx.AsyncClient, db: AsyncEngine, move: str
) -> None:
    pairs = [await _two_owners(db) for _ in range(6)]

    def step_down(caller: Caller, other: Caller, workspace: Workspace) -> Awaitable[httpx.Response]:
        if move == "leave":
            url = f"{members_url(workspace.id)}/{caller.user.id}"
            return client.delete(url, headers=caller.headers)
        url = f"{members_url(workspace.id)}/{other.user.id}"
        return client.patch(url, json={"role": "member"}, headers=caller.headers)

    responses = await asyncio.gather(
        *(step_down(a, b, w) for a, b, w in pairs), *(step_down(b, a, w) for a, b, w in pairs)
    )

    for n, (_, _, workspace) in enumerate(pairs):
        mine = (responses[n].status_code, responses[n + len(pairs)].status_code)
        assert sorted(mine)[0] in (200, 204)
        assert sorted(mine)[1] in (403, 422)
        assert list((await roles(db, workspace.id)).values()).count("owner") == 1
