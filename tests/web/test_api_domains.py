"""/workspaces/{id}/domains: custom tracking domains; members and owners change them."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign, make_domain, make_workspace
from tests.web.callers import make_member, make_owner
from trilha.db.schema import domains
from trilha.workspaces import Role


def domains_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/domains"


async def test_it_adds_a_domain(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    member = await make_member(db, workspace, Role.MEMBER)

    response = await client.post(
        domains_url(workspace.id),
        json={"host": "Track.Example.com.", "fallback_url": "https://example.com/"},
        headers=member.headers,
    )

    assert response.status_code == 201
    assert (response.json()["host"], response.json()["fallback_url"]) == (
        "track.example.com",
        "https://example.com/",
    )
    [row] = await fetch_all(db, domains, workspace_id=workspace.id)
    assert (row["id"], row["host"]) == (response.json()["id"], "track.example.com")


async def test_it_refuses_a_host_with_a_scheme(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        domains_url(workspace.id), json={"host": "https://track.example.com"}, headers=owner.headers
    )

    assert response.status_code == 422
    assert "without scheme or path" in response.json()["errors"]["host"]
    assert await fetch_all(db, domains) == []


async def test_it_answers_409_for_a_domain_in_use_anywhere(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_domain(db, await make_workspace(db), "go.example.com")

    response = await client.post(
        domains_url(workspace.id), json={"host": "go.example.com"}, headers=owner.headers
    )

    assert response.status_code == 409
    assert response.json()["errors"] == {"host": "this domain is already in use"}
    assert await fetch_all(db, domains, workspace_id=workspace.id) == []


async def test_it_lists_and_shows_domains_to_viewers(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    domain = await make_domain(db, workspace, "b.example.com")
    await make_domain(db, workspace, "a.example.com")
    viewer = await make_member(db, workspace, Role.VIEWER)

    listed = await client.get(domains_url(workspace.id), headers=viewer.headers)
    one = await client.get(f"{domains_url(workspace.id)}/{domain.id}", headers=viewer.headers)

    assert [d["host"] for d in listed.json()] == ["a.example.com", "b.example.com"]
    assert one.json()["host"] == "b.example.com"


async def test_it_changes_and_clears_the_fallback_url(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    domain = await make_domain(db, workspace, "go.example.com")
    url = f"{domains_url(workspace.id)}/{domain.id}"

    changed = await client.patch(
        url, json={"fallback_url": "https://x.example/"}, headers=owner.headers
    )
    [row_after_change] = await fetch_all(db, domains, id=domain.id)
    cleared = await client.patch(url, json={"fallback_url": None}, headers=owner.headers)

    assert changed.json()["fallback_url"] == "https://x.example/"
    assert row_after_change["fallback_url"] == "https://x.example/"
    assert cleared.json()["fallback_url"] is None
    [row] = await fetch_all(db, domains, id=domain.id)
    assert row["fallback_url"] is None


async def test_it_deletes_a_domain_no_campaign_uses(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    domain = await make_domain(db, workspace, "go.example.com")

    response = await client.delete(
        f"{domains_url(workspace.id)}/{domain.id}", headers=owner.headers
    )

    assert response.status_code == 204
    assert await fetch_all(db, domains) == []


async def test_it_keeps_a_domain_that_campaigns_use(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    domain = await make_domain(db, workspace, "go.example.com")
    await make_campaign(db, workspace, host="go.example.com")

    response = await client.delete(
        f"{domains_url(workspace.id)}/{domain.id}", headers=owner.headers
    )

    assert response.status_code == 409
    assert "1 campaign(s) still use this domain" in response.json()["detail"]
    assert len(await fetch_all(db, domains)) == 1


async def test_it_lets_viewers_only_read(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    domain = await make_domain(db, workspace, "go.example.com")
    viewer = await make_member(db, workspace, Role.VIEWER)
    url = domains_url(workspace.id)

    responses = [
        await client.post(url, json={"host": "new.example.com"}, headers=viewer.headers),
        await client.patch(
            f"{url}/{domain.id}",
            json={"fallback_url": "https://x.example/"},
            headers=viewer.headers,
        ),
        await client.delete(f"{url}/{domain.id}", headers=viewer.headers),
    ]

    assert [r.status_code for r in responses] == [403] * 3
    [row] = await fetch_all(db, domains)
    assert (row["host"], row["fallback_url"]) == ("go.example.com", None)


async def test_it_answers_404_for_a_domain_of_another_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    theirs = await make_domain(db, await make_workspace(db), "theirs.example.com")
    url = f"{domains_url(workspace.id)}/{theirs.id}"

    shown = await client.get(url, headers=owner.headers)
    deleted = await client.delete(url, headers=owner.headers)

    assert [shown.status_code, deleted.status_code] == [404, 404]
    assert shown.json() == {"detail": "domain not found"}
    assert len(await fetch_all(db, domains, id=theirs.id)) == 1
