"""/workspaces/{id}/conversions and /orphans: conversions made by real postbacks, read back."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign
from tests.web.callers import make_member, make_owner
from tests.web.sales import click, create_merchant, postback
from trilha.db.schema import conversions, postback_log
from trilha.workspaces import Role


def conversions_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/conversions"


def ids(page: httpx.Response) -> list[str]:
    return [c["id"] for c in page.json()["conversions"]]


async def test_it_answers_a_conversion_with_its_status_history(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign, click_id = await click(client, db, workspace)
    pending = await postback(
        client, workspace, click_id=click_id, txid="T1", payout="1.234,56", status="pending"
    )
    approved = await postback(client, workspace, click_id=click_id, txid="T1", status="paid")

    response = await client.get(
        f"{conversions_url(workspace.id)}/{pending['conversion_id']}", headers=owner.headers
    )

    assert response.status_code == 200
    conversion = response.json()
    assert (conversion["value"], conversion["currency"]) == ("1234.56", "BRL")
    assert (conversion["status"], conversion["event_type"], conversion["txid"]) == (
        "approved",
        "SALE",
        "T1",
    )
    assert (conversion["click_id"], conversion["raw_click_id"]) == (click_id, click_id)
    assert (conversion["campaign_id"], conversion["merchant_id"]) == (campaign.id, None)
    assert conversion["created_at"].endswith("Z")
    history = [
        (h["from_status"], h["to_status"], h["actor"], h["postback_id"])
        for h in conversion["history"]
    ]
    assert history == [
        (None, "pending", "postback", pending["postback_id"]),
        ("pending", "approved", "postback", approved["postback_id"]),
    ]


async def test_it_lists_conversions_newest_first(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    _, click_id = await click(client, db, workspace)
    made = [
        (await postback(client, workspace, click_id=click_id, txid=f"T{n}", payout="10"))[
            "conversion_id"
        ]
        for n in range(3)
    ]

    response = await client.get(conversions_url(workspace.id), headers=viewer.headers)

    assert response.status_code == 200
    assert ids(response) == made[::-1]
    assert response.json()["next_before"] is None
    assert response.json()["conversions"][0]["value"] == "10.00"
    assert "history" not in response.json()["conversions"][0]


async def test_it_reads_conversions_page_by_page(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, click_id = await click(client, db, workspace)
    for n in range(5):
        await postback(client, workspace, click_id=click_id, txid=f"T{n}")
    # Same time for all: the cursor must still walk them without a gap or a repeat.
    async with db.begin() as conn:
        await conn.execute(update(conversions).values(created_at=datetime(2024, 5, 1, tzinfo=UTC)))

    seen: list[str] = []
    pages: list[int] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        page = await client.get(conversions_url(workspace.id), params=params, headers=owner.headers)
        seen += ids(page)
        pages.append(len(ids(page)))
        if page.json()["next_before"] is None:
            break
        params["before"] = page.json()["next_before"]

    assert pages == [2, 2, 1]
    assert len(seen) == len(set(seen))
    assert sorted(seen) == sorted(row["id"] for row in await fetch_all(db, conversions))


async def test_it_filters_conversions(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(client, owner, workspace, key="loja", preset="generic")
    one, first_click = await click(client, db, workspace)
    _, second_click = await click(client, db, workspace)
    await client.post(
        f"/api/v1/workspaces/{workspace.id}/event-types",
        json={"name": "TRIAL"},
        headers=owner.headers,
    )
    sale = await postback(client, workspace, "/pb/loja", click_id=first_click, txid="A")
    trial = await postback(client, workspace, click_id=second_click, txid="B", tipo="trial")
    refused = await postback(client, workspace, click_id=second_click, txid="C", status="recusado")
    orphan = await postback(client, workspace, click_id="from-email", txid="D")

    async def find(**params: str) -> list[str]:
        page = await client.get(conversions_url(workspace.id), params=params, headers=owner.headers)
        assert page.status_code == 200, page.text
        return sorted(ids(page))

    assert await find(campaign_id=one.id) == [sale["conversion_id"]]
    assert await find(merchant_id=merchant["id"]) == [sale["conversion_id"]]
    assert await find(click_id=second_click) == sorted(
        [trial["conversion_id"], refused["conversion_id"]]
    )
    assert await find(click_id="from-email") == [orphan["conversion_id"]]
    assert await find(txid="B") == [trial["conversion_id"]]
    assert await find(event_type="TRIAL") == [trial["conversion_id"]]
    assert await find(status="declined") == [refused["conversion_id"]]
    assert await find(orphan="true") == [orphan["conversion_id"]]
    assert len(await find(orphan="false")) == 3


async def test_it_filters_by_time_in_any_offset(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    _, click_id = await click(client, db, workspace)
    old = await postback(client, workspace, click_id=click_id, txid="OLD")
    new = await postback(client, workspace, click_id=click_id, txid="NEW")
    async with db.begin() as conn:
        await conn.execute(
            update(conversions)
            .where(conversions.c.id == old["conversion_id"])
            .values(created_at=datetime(2024, 5, 1, 2, 30, tzinfo=UTC))
        )

    # 2024-05-01T00:00-03:00 is 03:00 UTC: after the old conversion, before the new one.
    since = await client.get(
        conversions_url(workspace.id),
        params={"since": "2024-05-01T00:00:00-03:00"},
        headers=owner.headers,
    )
    until = await client.get(
        conversions_url(workspace.id),
        params={"until": "2024-05-01T00:00:00-03:00"},
        headers=owner.headers,
    )

    assert ids(since) == [new["conversion_id"]]
    assert ids(until) == [old["conversion_id"]]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "2024-05-01T00:00:00"}, "since"),
        ({"until": "2024-05-01"}, "until"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"status": "won"}, "status"),
        ({"orphan": "maybe"}, "orphan"),
    ],
)
async def test_it_refuses_invalid_filters(
    client: httpx.AsyncClient, db: AsyncEngine, params: dict[str, Any], field: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.get(conversions_url(workspace.id), params=params, headers=owner.headers)

    assert response.status_code == 422
    assert field in response.json()["errors"]


async def test_it_lists_orphans_and_attaches_one_to_its_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    member = await make_member(db, workspace, Role.MEMBER)
    campaign = await make_campaign(db, workspace)
    _, click_id = await click(client, db, workspace, campaign)
    await postback(client, workspace, click_id=click_id, txid="ON-A-CLICK")
    orphan = await postback(client, workspace, click_id="from-email", txid="T1")
    orphans_url = f"/api/v1/workspaces/{workspace.id}/orphans"

    listed = await client.get(orphans_url, headers=owner.headers)
    attached = await client.post(
        f"{conversions_url(workspace.id)}/{orphan['conversion_id']}/attach",
        json={"click_id": click_id},
        headers=member.headers,
    )
    after = await client.get(orphans_url, headers=owner.headers)

    assert orphan["status"] == "orphan"
    assert ids(listed) == [orphan["conversion_id"]]
    assert listed.json()["conversions"][0]["raw_click_id"] == "from-email"
    assert attached.status_code == 200
    conversion = attached.json()
    assert (conversion["click_id"], conversion["campaign_id"]) == (click_id, campaign.id)
    assert conversion["raw_click_id"] == "from-email"
    assert conversion["attached_at"] is not None
    assert [h["to_status"] for h in conversion["history"]] == ["approved"]
    assert after.json() == {"conversions": [], "next_before": None}


async def test_attaching_refuses_an_unknown_click_or_an_attached_conversion(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, click_id = await click(client, db, workspace)
    on_click = await postback(client, workspace, click_id=click_id, txid="A")
    orphan = await postback(client, workspace, click_id="from-email", txid="B")

    unknown = await client.post(
        f"{conversions_url(workspace.id)}/{orphan['conversion_id']}/attach",
        json={"click_id": "no-such-click"},
        headers=owner.headers,
    )
    attached = await client.post(
        f"{conversions_url(workspace.id)}/{on_click['conversion_id']}/attach",
        json={"click_id": click_id},
        headers=owner.headers,
    )
    empty = await client.post(
        f"{conversions_url(workspace.id)}/{orphan['conversion_id']}/attach",
        json={},
        headers=owner.headers,
    )

    assert (unknown.status_code, list(unknown.json()["errors"])) == (422, ["click_id"])
    assert (attached.status_code, list(attached.json()["errors"])) == (422, ["conversion_id"])
    assert (empty.status_code, list(empty.json()["errors"])) == (422, ["click_id"])
    [row] = await fetch_all(db, conversions, id=orphan["conversion_id"])
    assert row["click_id"] is None


async def test_a_viewer_cannot_attach_an_orphan(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    _, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    _, click_id = await click(client, db, workspace)
    orphan = await postback(client, workspace, click_id="from-email", txid="B")

    response = await client.post(
        f"{conversions_url(workspace.id)}/{orphan['conversion_id']}/attach",
        json={"click_id": click_id},
        headers=viewer.headers,
    )

    assert response.status_code == 403
    [row] = await fetch_all(db, conversions)
    assert row["click_id"] is None


async def test_it_hides_the_conversions_of_other_workspaces(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, theirs = await make_owner(db)
    _, my_click = await click(client, db, workspace)
    _, their_click = await click(client, db, theirs)
    their_orphan = await postback(client, theirs, click_id="elsewhere", txid="T1")
    await postback(client, theirs, click_id=their_click, txid="T2")
    theirs_url = f"{conversions_url(workspace.id)}/{their_orphan['conversion_id']}"

    listed = await client.get(conversions_url(workspace.id), headers=owner.headers)
    orphans = await client.get(f"/api/v1/workspaces/{workspace.id}/orphans", headers=owner.headers)
    shown = await client.get(theirs_url, headers=owner.headers)
    attached = await client.post(
        f"{theirs_url}/attach", json={"click_id": my_click}, headers=owner.headers
    )
    foreign = await client.get(conversions_url(theirs.id), headers=owner.headers)

    assert listed.json() == orphans.json() == {"conversions": [], "next_before": None}
    assert (shown.status_code, attached.status_code, foreign.status_code) == (404, 404, 404)
    assert shown.json() == {"detail": "conversion not found"}
    assert len(await fetch_all(db, postback_log)) == 2
