"""/workspaces/{id}/sources: traffic sources and the parameters their links carry."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign, make_source, make_workspace
from tests.web.callers import make_member, make_owner
from trilha.campaigns import ParamMapping
from trilha.db.schema import campaigns, traffic_sources
from trilha.workspaces import Role


def sources_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/sources"


async def test_it_creates_a_source_with_its_parameters(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    member = await make_member(db, workspace, Role.MEMBER)
    params = [{"param": "cid", "field": "ad_id"}, {"param": "pl", "field": "placement"}]

    response = await client.post(
        sources_url(workspace.id),
        json={"name": "Facebook", "params": params},
        headers=member.headers,
    )

    assert response.status_code == 201
    assert (response.json()["name"], response.json()["params"]) == ("Facebook", params)
    [row] = await fetch_all(db, traffic_sources, workspace_id=workspace.id)
    assert (row["id"], row["params"]) == (response.json()["id"], params)


async def test_it_names_the_bad_mapping_in_a_422(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    params = [{"param": "cid", "field": "ad_id"}, {"param": "x", "field": "favourite_colour"}]

    response = await client.post(
        sources_url(workspace.id), json={"name": "TikTok", "params": params}, headers=owner.headers
    )

    assert response.status_code == 422
    assert response.json()["errors"]["params[1].field"].startswith("must be one of: creative")
    assert await fetch_all(db, traffic_sources) == []


async def test_it_answers_409_for_a_name_taken_in_the_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_source(db, workspace, name="Google")

    response = await client.post(
        sources_url(workspace.id), json={"name": "Google"}, headers=owner.headers
    )

    assert response.status_code == 409
    assert response.json()["errors"] == {"name": "a traffic source with this name exists"}
    assert len(await fetch_all(db, traffic_sources)) == 1


async def test_it_lists_and_shows_sources_to_viewers(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    source = await make_source(
        db, workspace, name="Taboola", params=(ParamMapping("s", "site_id"),)
    )
    await make_source(db, workspace, name="Kwai")
    viewer = await make_member(db, workspace, Role.VIEWER)

    listed = await client.get(sources_url(workspace.id), headers=viewer.headers)
    one = await client.get(f"{sources_url(workspace.id)}/{source.id}", headers=viewer.headers)

    assert [s["name"] for s in listed.json()] == ["Kwai", "Taboola"]
    assert one.json()["params"] == [{"param": "s", "field": "site_id"}]


async def test_it_renames_a_source_and_replaces_its_parameters(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    source = await make_source(db, workspace, name="FB", params=(ParamMapping("a", "ad_id"),))
    url = f"{sources_url(workspace.id)}/{source.id}"

    renamed = await client.patch(url, json={"name": "Meta"}, headers=owner.headers)
    remapped = await client.patch(
        url, json={"params": [{"param": "c", "field": "creative"}]}, headers=owner.headers
    )

    assert renamed.json()["params"] == [{"param": "a", "field": "ad_id"}]
    assert remapped.json() == {**renamed.json(), "params": [{"param": "c", "field": "creative"}]}
    [row] = await fetch_all(db, traffic_sources, id=source.id)
    assert (row["name"], row["params"]) == ("Meta", [{"param": "c", "field": "creative"}])


async def test_it_deletes_a_source_and_its_campaigns_keep_running_without_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    source = await make_source(db, workspace)
    campaign = await make_campaign(db, workspace, source_id=source.id)

    response = await client.delete(
        f"{sources_url(workspace.id)}/{source.id}", headers=owner.headers
    )

    assert response.status_code == 204
    assert await fetch_all(db, traffic_sources) == []
    [row] = await fetch_all(db, campaigns, id=campaign.id)
    assert row["source_id"] is None


async def test_it_lets_viewers_only_read(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    source = await make_source(db, workspace, name="Kept")
    viewer = await make_member(db, workspace, Role.VIEWER)
    url = sources_url(workspace.id)

    responses = [
        await client.post(url, json={"name": "New"}, headers=viewer.headers),
        await client.patch(f"{url}/{source.id}", json={"name": "Renamed"}, headers=viewer.headers),
        await client.delete(f"{url}/{source.id}", headers=viewer.headers),
    ]

    assert [r.status_code for r in responses] == [403] * 3
    assert [row["name"] for row in await fetch_all(db, traffic_sources)] == ["Kept"]


async def test_it_answers_404_for_a_source_of_another_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    theirs = await make_source(db, await make_workspace(db), name="Theirs")
    url = f"{sources_url(workspace.id)}/{theirs.id}"

    responses = [
        await client.get(url, headers=owner.headers),
        await client.patch(url, json={"name": "Mine"}, headers=owner.headers),
        await client.delete(url, headers=owner.headers),
    ]

    assert [r.status_code for r in responses] == [404] * 3
    [row] = await fetch_all(db, traffic_sources, id=theirs.id)
    assert row["name"] == "Theirs"
