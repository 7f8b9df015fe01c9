"""/workspaces/{id}/event-types: built-in and custom event types, and what each counts as."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import make_member, make_owner
from tests.web.sales import click, postback
from trilha.db.schema import conversions, event_types
from trilha.event_types import BUILTIN
from trilha.workspaces import Role


def types_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/event-types"


async def test_it_lists_the_built_in_types_of_a_new_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)

    response = await client.get(types_url(workspace.id), headers=viewer.headers)

    assert response.status_code == 200
    listed = {t["name"]: t for t in response.json()}
    assert set(listed) == set(BUILTIN)
    assert (listed["LEAD"]["counts_as_conversion"], listed["LEAD"]["counts_as_revenue"]) == (
        True,
        False,
    )
    assert all(t["is_builtin"] for t in listed.values())


async def test_a_custom_type_makes_postbacks_of_that_event_count(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, click_id = await click(client, db, workspace)

    response = await client.post(
        types_url(workspace.id),
        json={"name": "trial", "counts_as_revenue": False},
        headers=owner.headers,
    )
    sale = await postback(client, workspace, click_id=click_id, tipo="trial", txid="T1")

    assert response.status_code == 201
    created = response.json()
    assert (created["name"], created["is_builtin"]) == ("TRIAL", False)
    assert (created["counts_as_conversion"], created["counts_as_revenue"]) == (True, False)
    assert (sale["status"], sale["event"]) == ("created", "TRIAL")
    [conversion] = await fetch_all(db, conversions)
    assert conversion["event_type"] == "TRIAL"


async def test_it_refuses_a_bad_or_repeated_name(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    bad = await client.post(
        types_url(workspace.id), json={"name": "9 lives"}, headers=owner.headers
    )
    repeated = await client.post(
        types_url(workspace.id), json={"name": "sale"}, headers=owner.headers
    )

    assert (bad.status_code, list(bad.json()["errors"])) == (422, ["name"])
    assert (repeated.status_code, list(repeated.json()["errors"])) == (409, ["name"])
    assert len(await fetch_all(db, event_types, workspace_id=workspace.id)) == len(BUILTIN)


async def test_it_changes_what_a_type_counts_as(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    [lead] = await fetch_all(db, event_types, workspace_id=workspace.id, name="LEAD")

    response = await client.patch(
        f"{types_url(workspace.id)}/{lead['id']}",
        json={"counts_as_revenue": True},
        headers=owner.headers,
    )

    assert response.status_code == 200
    assert (response.json()["counts_as_conversion"], response.json()["counts_as_revenue"]) == (
        True,
        True,
    )
    [row] = await fetch_all(db, event_types, id=lead["id"])
    assert row["counts_as_revenue"] is True


async def test_it_deletes_custom_types_only(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    custom = (
        await client.post(types_url(workspace.id), json={"name": "TRIAL"}, headers=owner.headers)
    ).json()
    [sale] = await fetch_all(db, event_types, workspace_id=workspace.id, name="SALE")

    deleted = await client.delete(
        f"{types_url(workspace.id)}/{custom['id']}", headers=owner.headers
    )
    builtin = await client.delete(f"{types_url(workspace.id)}/{sale['id']}", headers=owner.headers)

    assert deleted.status_code == 204
    assert builtin.status_code == 422
    assert "built-in" in builtin.json()["errors"]["name"]
    names = {row["name"] for row in await fetch_all(db, event_types, workspace_id=workspace.id)}
    assert names == set(BUILTIN)


async def test_a_viewer_cannot_change_event_types(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    [sale] = await fetch_all(db, event_types, workspace_id=workspace.id, name="SALE")
    one = f"{types_url(workspace.id)}/{sale['id']}"

    answers = [
        await client.post(types_url(workspace.id), json={"name": "X"}, headers=viewer.headers),
        await client.patch(one, json={"counts_as_revenue": False}, headers=viewer.headers),
        await client.delete(one, headers=viewer.headers),
    ]

    assert [a.status_code for a in answers] == [403, 403, 403]


async def test_it_hides_the_event_types_of_other_workspaces(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, theirs = await make_owner(db)
    [sale] = await fetch_all(db, event_types, workspace_id=theirs.id, name="SALE")

    changed = await client.patch(
        f"{types_url(workspace.id)}/{sale['id']}",
        json={"counts_as_revenue": False},
        headers=owner.headers,
    )
    deleted = await client.delete(f"{types_url(workspace.id)}/{sale['id']}", headers=owner.headers)
    foreign = await client.get(types_url(theirs.id), headers=owner.headers)

    assert (changed.status_code, deleted.status_code, foreign.status_code) == (404, 404, 404)
    [row] = await fetch_all(db, event_types, id=sale["id"])
    assert row["counts_as_revenue"] is True
