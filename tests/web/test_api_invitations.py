"""/workspaces/{id}/invitations: one-time links to join a workspace, made and revoked by owners."""

from __future__ import annotations

from datetime import timedelta

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, now
from tests.web.callers import make_member, make_owner
from trilha.db.schema import invitations
from trilha.ids import hash_secret
from trilha.invitations import pending_invitation
from trilha.workspaces import Role


def invitations_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/invitations"


async def test_it_answers_the_link_once_and_keeps_only_its_hash(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        invitations_url(workspace.id),
        json={"email": "Ana@Example.com", "role": "viewer"},
        headers=owner.headers,
    )
    listed = await client.get(invitations_url(workspace.id), headers=owner.headers)

    assert response.status_code == 201
    created = response.json()
    assert (created["email"], created["role"]) == ("ana@example.com", "viewer")
    token = created["url"].removeprefix("http://testserver/invite/")
    [row] = await fetch_all(db, invitations)
    assert row["token_hash"] == hash_secret(token)
    assert token not in listed.text
    assert [i["id"] for i in listed.json()] == [created["id"]]
    async with db.connect() as conn:
        pending = await pending_invitation(conn, token, now=now())
    assert pending is not None
    assert (pending.email, pending.role, pending.has_account) == (
        "ana@example.com",
        Role.VIEWER,
        False,
    )


async def test_it_refuses_to_invite_a_member_and_lets_only_owners_invite(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    member = await make_member(db, workspace, Role.MEMBER)

    twice = await client.post(
        invitations_url(workspace.id),
        json={"email": member.user.email, "role": "viewer"},
        headers=owner.headers,
    )
    by_member = await client.post(
        invitations_url(workspace.id),
        json={"email": "x@example.com", "role": "owner"},
        headers=member.headers,
    )

    assert twice.status_code == 409
    assert twice.json()["errors"] == {"email": "this user is already a member"}
    assert by_member.status_code == 403
    assert await fetch_all(db, invitations) == []


async def test_a_revoked_or_expired_link_no_longer_opens(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    made = [
        (
            await client.post(
                invitations_url(workspace.id),
                json={"email": f"p{n}@example.com"},
                headers=owner.headers,
            )
        ).json()
        for n in range(2)
    ]
    revoked, expired = (m["url"].removeprefix("http://testserver") for m in made)
    async with db.begin() as conn:
        await conn.execute(
            update(invitations)
            .where(invitations.c.id == made[1]["id"])
            .values(expires_at=now() - timedelta(seconds=1))
        )

    deleted = await client.delete(
        f"{invitations_url(workspace.id)}/{made[0]['id']}", headers=owner.headers
    )
    again = await client.delete(
        f"{invitations_url(workspace.id)}/{made[0]['id']}", headers=owner.headers
    )

    assert (deleted.status_code, again.status_code) == (204, 404)
    for path in (revoked, expired):
        page = await client.get(path)
        assert page.status_code == 404
        assert 'id="invite-invalid"' in page.text
    listed = await client.get(invitations_url(workspace.id), headers=owner.headers)
    assert listed.json() == []
