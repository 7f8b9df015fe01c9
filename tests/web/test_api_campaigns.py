"""/workspaces/{id}/campaigns: tracking links, each answered with the URL to hand out."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign, make_domain, make_source, make_workspace
from tests.web.callers import make_member, make_owner
from tests.web.sales import create_merchant
from trilha.db.schema import campaigns
from trilha.workspaces import Role

OFFER = "https://pay.example.com/checkout?src={click_id}"


def campaigns_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/campaigns"


async def test_it_creates_a_campaign_and_answers_its_tracking_url(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    source = await make_source(db, workspace)
    member = await make_member(db, workspace, Role.MEMBER)

    response = await client.post(
        campaigns_url(workspace.id),
        json={"name": "Black Friday", "slug": "BF-24", "offer_url": OFFER, "source_id": source.id},
        headers=member.headers,
    )

    assert response.status_code == 201
    body = response.json()
    assert body["tracking_url"] == "http://testserver/r/bf-24"
    assert (body["slug"], body["host"], body["status"], body["source_id"]) == (
        "bf-24",
        "",
        "active",
        source.id,
    )
    [row] = await fetch_all(db, campaigns, workspace_id=workspace.id)
    assert (row["id"], row["slug"], row["offer_url"]) == (body["id"], "bf-24", OFFER)


async def test_it_builds_the_tracking_url_on_a_custom_domain(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_domain(db, workspace, "go.example.com")

    response = await client.post(
        campaigns_url(workspace.id),
        json={"name": "LP", "slug": "lp", "host": "go.example.com", "offer_url": OFFER},
        headers=owner.headers,
    )

    assert response.json()["tracking_url"] == "https://go.example.com/r/lp"
    [row] = await fetch_all(db, campaigns)
    assert row["host"] == "go.example.com"


async def test_it_answers_422_for_an_offer_url_that_is_not_http(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        campaigns_url(workspace.id),
        json={"name": "LP", "slug": "lp", "offer_url": "ftp://pay.example.com/x"},
        headers=owner.headers,
    )

    assert response.status_code == 422
    assert response.json()["errors"] == {"offer_url": "must start with http:// or https://"}
    assert await fetch_all(db, campaigns) == []


HOST_MACROS = (
    "https://{sub1}/x",
    "https://offer.example{sub1}/x",
    "https://{sub1}.offer.example/x",
    "https://{sub1}@offer.example/x",
    "https://offer.example:{sub1}/x",
    "{sub1}://offer.example/x",
)


async def test_it_refuses_a_macro_that_would_choose_where_an_offer_url_leads(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)

    for offer_url in HOST_MACROS:
        created = await client.post(
            campaigns_url(workspace.id),
            json={"name": "LP", "slug": "lp", "offer_url": offer_url},
            headers=owner.headers,
        )
        changed = await client.patch(
            f"{campaigns_url(workspace.id)}/{campaign.id}",
            json={"offer_url": offer_url},
            headers=owner.headers,
        )

        for response in (created, changed):
            assert response.status_code == 422, (offer_url, response.text)
            assert "offer_url" in response.json()["errors"], offer_url
    [row] = await fetch_all(db, campaigns)
    assert row["offer_url"] == campaign.offer_url


async def test_it_answers_422_naming_missing_fields(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        campaigns_url(workspace.id), json={"name": "LP"}, headers=owner.headers
    )

    assert response.status_code == 422
    assert set(response.json()["errors"]) == {"slug", "offer_url"}


async def test_it_answers_409_for_a_slug_taken_on_the_default_domain(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, await make_workspace(db), slug="promo")

    response = await client.post(
        campaigns_url(workspace.id),
        json={"name": "Mine", "slug": "promo", "offer_url": OFFER},
        headers=owner.headers,
    )

    assert response.status_code == 409
    assert response.json()["errors"] == {"slug": "this slug is already in use on this domain"}
    assert await fetch_all(db, campaigns, workspace_id=workspace.id) == []


async def test_it_refuses_a_domain_or_source_of_another_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    other = await make_workspace(db)
    await make_domain(db, other, "theirs.example.com")
    their_source = await make_source(db, other)
    url = campaigns_url(workspace.id)

    on_domain = await client.post(
        url,
        json={"name": "X", "slug": "x", "host": "theirs.example.com", "offer_url": OFFER},
        headers=owner.headers,
    )
    with_source = await client.post(
        url,
        json={"name": "X", "slug": "x", "source_id": their_source.id, "offer_url": OFFER},
        headers=owner.headers,
    )

    assert on_domain.json()["errors"] == {
        "host": "add this domain to the workspace and verify it first"
    }
    assert with_source.json()["errors"] == {"source_id": "no such traffic source in this workspace"}
    assert await fetch_all(db, campaigns) == []


async def test_it_lists_campaigns_newest_first_to_viewers(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    older = await make_campaign(db, workspace, slug="older")
    newer = await make_campaign(db, workspace, slug="newer")
    viewer = await make_member(db, workspace, Role.VIEWER)

    listed = await client.get(campaigns_url(workspace.id), headers=viewer.headers)
    one = await client.get(f"{campaigns_url(workspace.id)}/{older.id}", headers=viewer.headers)

    assert [c["id"] for c in listed.json()] == [newer.id, older.id]
    assert listed.json()[0]["tracking_url"] == "http://testserver/r/newer"
    assert one.json()["slug"] == "older"


async def test_it_changes_only_the_fields_sent(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    source = await make_source(db, workspace)
    campaign = await make_campaign(
        db, workspace, slug="lp", source_id=source.id, fallback_url="https://home.example.com/"
    )

    response = await client.patch(
        f"{campaigns_url(workspace.id)}/{campaign.id}",
        json={"status": "paused", "offer_url": "https://new.example.com/", "fallback_url": None},
        headers=owner.headers,
    )

    assert response.status_code == 200
    [row] = await fetch_all(db, campaigns, id=campaign.id)
    assert (row["status"], row["offer_url"], row["fallback_url"]) == (
        "paused",
        "https://new.example.com/",
        None,
    )
    assert (row["slug"], row["source_id"], row["name"]) == ("lp", source.id, campaign.name)
    assert response.json()["status"] == "paused"
    assert response.json()["updated_at"] > response.json()["created_at"]


async def test_it_refuses_null_for_a_campaign_field_that_cannot_be_empty(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)

    response = await client.patch(
        f"{campaigns_url(workspace.id)}/{campaign.id}",
        json={"offer_url": None, "status": "deleted"},
        headers=owner.headers,
    )

    assert response.status_code == 422
    assert set(response.json()["errors"]) == {"offer_url", "status"}
    [row] = await fetch_all(db, campaigns, id=campaign.id)
    assert (row["offer_url"], row["status"]) == (campaign.offer_url, "active")


async def test_it_answers_409_when_a_new_slug_is_taken(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="taken")
    campaign = await make_campaign(db, workspace, slug="mine")

    response = await client.patch(
        f"{campaigns_url(workspace.id)}/{campaign.id}",
        json={"slug": "taken"},
        headers=owner.headers,
    )

    assert response.status_code == 409
    [row] = await fetch_all(db, campaigns, id=campaign.id)
    assert row["slug"] == "mine"


async def test_it_deletes_a_campaign_without_clicks(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)

    response = await client.delete(
        f"{campaigns_url(workspace.id)}/{campaign.id}", headers=owner.headers
    )

    assert response.status_code == 204
    assert await fetch_all(db, campaigns) == []


async def test_it_keeps_a_campaign_that_has_clicks(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    assert (await client.get("/r/lp")).status_code == 302

    response = await client.delete(
        f"{campaigns_url(workspace.id)}/{campaign.id}", headers=owner.headers
    )

    assert response.status_code == 409
    assert "pause it instead" in response.json()["detail"]
    assert len(await fetch_all(db, campaigns)) == 1


async def test_it_lets_viewers_only_read(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace, name="Kept")
    viewer = await make_member(db, workspace, Role.VIEWER)
    url = campaigns_url(workspace.id)

    responses = [
        await client.post(
            url, json={"name": "X", "slug": "x", "offer_url": OFFER}, headers=viewer.headers
        ),
        await client.patch(f"{url}/{campaign.id}", json={"name": "Y"}, headers=viewer.headers),
        await client.delete(f"{url}/{campaign.id}", headers=viewer.headers),
    ]

    assert [r.status_code for r in responses] == [403] * 3
    assert [row["name"] for row in await fetch_all(db, campaigns)] == ["Kept"]


async def test_it_answers_404_for_a_campaign_of_another_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    theirs = await make_campaign(db, await make_workspace(db), name="Theirs")
    url = f"{campaigns_url(workspace.id)}/{theirs.id}"

    responses = [
        await client.get(url, headers=owner.headers),
        await client.patch(url, json={"name": "Mine"}, headers=owner.headers),
        await client.delete(url, headers=owner.headers),
    ]

    assert [r.status_code for r in responses] == [404] * 3
    assert responses[0].json() == {"detail": "campaign not found"}
    [row] = await fetch_all(db, campaigns, id=theirs.id)
    assert row["name"] == "Theirs"


async def test_it_sets_changes_and_clears_a_campaigns_merchant(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    hotmart = await create_merchant(client, owner, workspace, key="hotmart", preset="hotmart")
    kiwify = await create_merchant(client, owner, workspace, key="kiwify", preset="kiwify")
    other_owner, other = await make_owner(db)
    foreign = await create_merchant(client, other_owner, other, key="theirs", preset="generic")

    created = await client.post(
        campaigns_url(workspace.id),
        json={"name": "LP", "slug": "lp", "offer_url": OFFER, "merchant_id": hotmart["id"]},
        headers=owner.headers,
    )
    url = f"{campaigns_url(workspace.id)}/{created.json()['id']}"
    changed = await client.patch(url, json={"merchant_id": kiwify["id"]}, headers=owner.headers)
    refused = await client.patch(url, json={"merchant_id": foreign["id"]}, headers=owner.headers)
    stored_before_clearing = (await fetch_all(db, campaigns))[0]["merchant_id"]
    cleared = await client.patch(url, json={"merchant_id": None}, headers=owner.headers)

    assert created.status_code == 201
    assert created.json()["merchant_id"] == hotmart["id"]
    assert changed.json()["merchant_id"] == kiwify["id"]
    assert refused.status_code == 422
    assert refused.json()["errors"] == {"merchant_id": "no such merchant in this workspace"}
    assert stored_before_clearing == kiwify["id"]
    assert cleared.json()["merchant_id"] is None
    [row] = await fetch_all(db, campaigns)
    assert row["merchant_id"] is None
