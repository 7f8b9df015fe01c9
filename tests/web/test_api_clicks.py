"""/workspaces/{id}/clicks: stored clicks, newest first, filtered and read page by page."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign, make_workspace, move_click
from tests.web.callers import make_member, make_owner
from trilha.dimensions import DIMENSIONS
from trilha.web.api.schemas import ClickOut
from trilha.workspaces import Role, Workspace


def clicks_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/clicks"


async def click(client: httpx.AsyncClient, path: str) -> None:
    assert (await client.get(path, headers={"user-agent": "Mozilla/5.0 (X11; Linux)"})).is_redirect


async def stored_ids(db: AsyncEngine, workspace: Workspace) -> list[str]:
    rows = await fetch_clicks(db, workspace_id=workspace.id)
    return sorted((row["id"] for row in rows), reverse=True)


async def test_it_lists_a_workspaces_clicks_newest_first(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    for n in range(3):
        await click(client, f"/r/lp?sub1=s{n}&utm_source=fb&color=blue")

    response = await client.get(clicks_url(workspace.id), headers=owner.headers)

    assert response.status_code == 200
    page = response.json()
    assert [c["id"] for c in page["clicks"]] == await stored_ids(db, workspace)
    assert page["next_before"] is None
    newest = page["clicks"][0]
    assert (newest["campaign_id"], newest["sub1"], newest["utm_source"]) == (
        campaign.id,
        "s2",
        "fb",
    )
    assert newest["params"] == {"color": "blue"}
    assert newest["created_at"].endswith("Z")
    assert "visitor_key" not in newest


async def test_it_reads_clicks_page_by_page(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="lp")
    for _ in range(5):
        await click(client, "/r/lp")

    seen: list[str] = []
    pages: list[int] = []
    params: dict[str, str | int] = {"limit": 2}
    while True:
        page = (
            await client.get(clicks_url(workspace.id), params=params, headers=owner.headers)
        ).json()
        seen += [c["id"] for c in page["clicks"]]
        pages.append(len(page["clicks"]))
        if page["next_before"] is None:
            break
        params["before"] = page["next_before"]

    assert pages == [2, 2, 1]
    assert seen == await stored_ids(db, workspace)


async def test_it_filters_by_campaign_and_click_id(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    one = await make_campaign(db, workspace, slug="one")
    await make_campaign(db, workspace, slug="two")
    await click(client, "/r/one")
    await click(client, "/r/two")
    [first] = await fetch_clicks(db, campaign_id=one.id)

    by_campaign = await client.get(
        clicks_url(workspace.id), params={"campaign_id": one.id}, headers=owner.headers
    )
    by_id = await client.get(
        clicks_url(workspace.id), params={"click_id": first["id"]}, headers=owner.headers
    )

    assert [c["id"] for c in by_campaign.json()["clicks"]] == [first["id"]]
    assert [c["id"] for c in by_id.json()["clicks"]] == [first["id"]]


async def test_it_filters_by_time_in_any_offset(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    await click(client, "/r/lp")
    await click(client, "/r/lp")
    [old, new] = sorted(await stored_ids(db, workspace))
    old = await move_click(db, old, datetime(2024, 5, 1, 2, 30, tzinfo=UTC))

    # 2024-05-01T00:00-03:00 is 03:00 UTC: after the old click, before the new one.
    since = await client.get(
        clicks_url(workspace.id),
        params={"since": "2024-05-01T00:00:00-03:00", "campaign_id": campaign.id},
        headers=owner.headers,
    )
    until = await client.get(
        clicks_url(workspace.id),
        params={"until": "2024-05-01T00:00:00-03:00"},
        headers=owner.headers,
    )

    assert [c["id"] for c in since.json()["clicks"]] == [new]
    assert [c["id"] for c in until.json()["clicks"]] == [old]
    assert until.json()["clicks"][0]["created_at"] == "2024-05-01T02:30:00Z"


async def test_it_refuses_a_time_without_an_offset(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.get(
        clicks_url(workspace.id), params={"since": "2024-05-01T00:00:00"}, headers=owner.headers
    )

    assert response.status_code == 422
    assert "timezone" in response.json()["errors"]["since"]


@pytest.mark.parametrize(
    ("name", "value"), [("since", "0001-01-01T00:04:00+04:00"), ("until", "9999-12-31T23:59-23:59")]
)
async def test_it_refuses_a_time_that_leaves_the_calendar_in_utc(
    client: httpx.AsyncClient, db: AsyncEngine, name: str, value: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.get(
        clicks_url(workspace.id), params={name: value}, headers=owner.headers
    )

    assert response.status_code == 422
    assert "outside the range of dates" in response.json()["errors"][name]


@pytest.mark.parametrize("limit", [0, 1001, "many"])
async def test_it_refuses_a_limit_out_of_range(
    client: httpx.AsyncClient, db: AsyncEngine, limit: int | str
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.get(
        clicks_url(workspace.id), params={"limit": limit}, headers=owner.headers
    )

    assert response.status_code == 422
    assert "limit" in response.json()["errors"]


async def test_it_shows_one_click_to_a_viewer(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    viewer = await make_member(db, workspace, Role.VIEWER)
    await click(client, "/r/lp?gclid=G1")
    [row] = await fetch_clicks(db)

    response = await client.get(f"{clicks_url(workspace.id)}/{row['id']}", headers=viewer.headers)

    assert response.status_code == 200
    assert (response.json()["id"], response.json()["gclid"]) == (row["id"], "G1")
    assert response.json()["ip"] == row["ip"]


async def test_it_hides_the_clicks_of_other_workspaces(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    other = await make_workspace(db)
    await make_campaign(db, other, slug="theirs")
    await click(client, "/r/theirs")
    [theirs] = await fetch_clicks(db)

    listed = await client.get(clicks_url(workspace.id), headers=owner.headers)
    shown = await client.get(f"{clicks_url(workspace.id)}/{theirs['id']}", headers=owner.headers)
    foreign = await client.get(clicks_url(other.id), headers=owner.headers)

    assert listed.json() == {"clicks": [], "next_before": None}
    assert shown.status_code == 404
    assert shown.json() == {"detail": "click not found"}
    assert foreign.status_code == 404


def test_it_answers_every_click_field() -> None:
    assert set(DIMENSIONS) <= set(ClickOut.model_fields)
