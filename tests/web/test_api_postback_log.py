"""/workspaces/{id}/postbacks: every postback as received, filtered, with its secrets masked."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.callers import make_member, make_owner
from tests.web.sales import click, create_merchant, postback
from trilha.db.schema import postback_log
from trilha.postbacks.log import MASK
from trilha.workspaces import Role

HOTTOK = "hottok9Secret77-Lm4"


def log_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/postbacks"


def ids(page: httpx.Response) -> list[str]:
    return [entry["id"] for entry in page.json()["postbacks"]]


async def test_it_shows_a_postback_as_received_with_its_secrets_masked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    await create_merchant(client, owner, workspace, key="hotmart", preset="hotmart", secret=HOTTOK)
    campaign, click_id = await click(client, db, workspace)
    sent = {
        "event": "PURCHASE_APPROVED",
        "version": "2.0.0",
        "hottok": HOTTOK,
        "data": {
            "purchase": {
                "transaction": "HP123",
                "status": "APPROVED",
                "price": {"value": 97.0, "currency_value": "BRL"},
                "origin": {"sck": click_id},
            }
        },
    }
    answer = await client.post(
        "/pb/hotmart",
        params={"token": workspace.postback_token},
        json=sent,
        headers={"x-hotmart-hottok": HOTTOK},
    )

    response = await client.get(
        f"{log_url(workspace.id)}/{answer.json()['postback_id']}", headers=viewer.headers
    )

    assert response.status_code == 200
    entry = response.json()
    assert (entry["outcome"], entry["reason"], entry["conversion_id"]) == (
        "created",
        "",
        answer.json()["conversion_id"],
    )
    assert (entry["method"], entry["path"], entry["source_ip"]) == (
        "POST",
        "/pb/hotmart",
        "198.51.100.23",
    )
    assert (entry["click_id"], entry["campaign_id"], entry["txid"]) == (
        click_id,
        campaign.id,
        "HP123",
    )
    assert (entry["event_type"], entry["status"], entry["value"], entry["currency"]) == (
        "SALE",
        "approved",
        "97.00",
        "BRL",
    )
    assert entry["query"] == f"token={MASK}"
    assert ["x-hotmart-hottok", MASK] in entry["headers"]
    assert f'"hottok":"{MASK}"' in entry["body"]
    assert entry["details"]["platform_event"] == "PURCHASE_APPROVED"
    assert entry["processing_us"] > 0
    assert (entry["body_truncated"], entry["auth_failed"], entry["replay_of"]) == (
        False,
        False,
        None,
    )
    assert HOTTOK not in response.text
    assert workspace.postback_token not in response.text


async def test_it_lists_postbacks_newest_first_without_their_requests(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, click_id = await click(client, db, workspace)
    sent = [
        await postback(client, workspace, click_id=click_id, txid=f"T{n}", secret=HOTTOK)
        for n in range(3)
    ]

    response = await client.get(log_url(workspace.id), headers=owner.headers)

    assert response.status_code == 200
    assert ids(response) == [answer["postback_id"] for answer in sent[::-1]]
    assert response.json()["next_before"] is None
    newest = response.json()["postbacks"][0]
    assert (newest["outcome"], newest["txid"]) == ("created", "T2")
    assert not {"query", "headers", "body", "details"} & set(newest)
    assert workspace.postback_token not in response.text


async def test_it_reads_the_log_page_by_page(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    for n in range(5):
        await postback(client, workspace, click_id=f"c{n}", txid=f"T{n}")
    async with db.begin() as conn:  # the same time for all: the cursor must still walk them
        await conn.execute(
            update(postback_log).values(received_at=datetime(2024, 5, 1, tzinfo=UTC))
        )

    seen: list[str] = []
    pages: list[int] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        page = await client.get(log_url(workspace.id), params=params, headers=owner.headers)
        seen += ids(page)
        pages.append(len(ids(page)))
        if page.json()["next_before"] is None:
            break
        params["before"] = page.json()["next_before"]

    assert pages == [2, 2, 1]
    assert len(set(seen)) == 5


async def test_it_filters_the_log(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(client, owner, workspace, key="loja", preset="generic")
    campaign, click_id = await click(client, db, workspace)
    created = await postback(client, workspace, "/pb/loja", click_id=click_id, txid="A")
    orphan = await postback(client, workspace, click_id="from-email", txid="B")
    invalid = await postback(client, workspace, click_id=click_id, txid="C", tipo="trial")
    async with db.begin() as conn:
        await conn.execute(
            update(postback_log)
            .where(postback_log.c.id == created["postback_id"])
            .values(received_at=datetime(2024, 5, 1, 2, 30, tzinfo=UTC))
        )

    async def find(**params: str) -> list[str]:
        page = await client.get(log_url(workspace.id), params=params, headers=owner.headers)
        assert page.status_code == 200, page.text
        return sorted(ids(page))

    assert await find(outcome="orphan") == [orphan["postback_id"]]
    assert await find(outcome="invalid") == [invalid["postback_id"]]
    assert await find(merchant_id=merchant["id"]) == [created["postback_id"]]
    assert await find(campaign_id=campaign.id) == [created["postback_id"]]
    assert await find(click_id=click_id) == [created["postback_id"]]
    assert await find(click_id="from-email") == [orphan["postback_id"]]
    assert await find(txid="B") == [orphan["postback_id"]]
    assert await find(until="2024-05-01T00:00:00-03:00") == [created["postback_id"]]
    assert await find(since="2024-05-01T00:00:00-03:00") == sorted(
        [orphan["postback_id"], invalid["postback_id"]]
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "2024-05-01T00:00:00"}, "since"),
        ({"outcome": "lost"}, "outcome"),
        ({"limit": 1001}, "limit"),
    ],
)
async def test_it_refuses_invalid_filters(
    client: httpx.AsyncClient, db: AsyncEngine, params: dict[str, Any], field: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.get(log_url(workspace.id), params=params, headers=owner.headers)

    assert response.status_code == 422
    assert field in response.json()["errors"]


async def test_it_hides_the_postbacks_of_other_workspaces(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, theirs = await make_owner(db)
    their = await postback(client, theirs, click_id="c", txid="T1")

    listed = await client.get(log_url(workspace.id), headers=owner.headers)
    shown = await client.get(
        f"{log_url(workspace.id)}/{their['postback_id']}", headers=owner.headers
    )
    foreign = await client.get(log_url(theirs.id), headers=owner.headers)

    assert listed.json() == {"postbacks": [], "next_before": None}
    assert (shown.status_code, foreign.status_code) == (404, 404)
    assert shown.json() == {"detail": "postback not found"}
