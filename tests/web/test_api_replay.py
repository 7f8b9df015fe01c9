"""POST /workspaces/{id}/postbacks/replay: fix the mapping, replay what failed, count once."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import make_member, make_owner
from tests.web.sales import click, create_merchant, postback
from trilha.db.schema import conversions, postback_log
from trilha.workspaces import Role, Workspace

SECRET = "shopSecret42-Vn8k"


def replay_url(workspace: Workspace) -> str:
    return f"/api/v1/workspaces/{workspace.id}/postbacks/replay"


async def test_replaying_after_adding_an_event_type_creates_the_conversion_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, click_id = await click(client, db, workspace)
    failed = await postback(client, workspace, click_id=click_id, tipo="trial", txid="T1")
    assert (failed["status"], failed["reason"]) == (
        "invalid",
        "unknown event type 'TRIAL'; add it under event types",
    )
    await client.post(
        f"/api/v1/workspaces/{workspace.id}/event-types",
        json={"name": "TRIAL"},
        headers=owner.headers,
    )

    first = await client.post(
        replay_url(workspace), json={"ids": [failed["postback_id"]]}, headers=owner.headers
    )
    again = await client.post(
        replay_url(workspace), json={"ids": [failed["postback_id"]]}, headers=owner.headers
    )

    assert first.status_code == 200
    [created] = first.json()
    [duplicate] = again.json()
    assert (created["replay_of"], created["outcome"], created["reason"]) == (
        failed["postback_id"],
        "created",
        "",
    )
    assert (duplicate["outcome"], duplicate["conversion_id"]) == (
        "duplicate",
        created["conversion_id"],
    )
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["id"], conversion["event_type"]) == (created["conversion_id"], "TRIAL")
    replays = await fetch_all(db, postback_log, replay_of=failed["postback_id"])
    assert sorted(r["id"] for r in replays) == sorted(
        [created["postback_id"], duplicate["postback_id"]]
    )
    [original] = await fetch_all(db, postback_log, id=failed["postback_id"])
    assert original["outcome"] == "invalid"  # history is never rewritten


async def test_replaying_after_fixing_the_merchants_rules_creates_the_conversions(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(
        client, owner, workspace, key="loja", preset="generic", secret=SECRET
    )
    _, click_id = await click(client, db, workspace)
    failed = [
        await postback(
            client,
            workspace,
            "/pb/loja",
            click_id=click_id,
            status="liberado",
            txid=txid,
            secret=SECRET,
        )
        for txid in ("T1", "T2")
    ]
    assert [f["status"] for f in failed] == ["invalid", "invalid"]
    rule = {"when_status": "liberado", "event_type": "SALE", "status": "approved"}
    await client.patch(
        f"/api/v1/workspaces/{workspace.id}/merchants/{merchant['id']}",
        json={"rules": [rule]},
        headers=owner.headers,
    )

    response = await client.post(
        replay_url(workspace),
        json={"ids": [f["postback_id"] for f in failed]},
        headers=owner.headers,
    )

    # The stored requests hold the secret masked: a replay skips the check they passed.
    assert response.status_code == 200
    results: list[dict[str, Any]] = response.json()
    assert [(r["replay_of"], r["outcome"]) for r in results] == [
        (failed[0]["postback_id"], "created"),
        (failed[1]["postback_id"], "created"),
    ]
    stored = await fetch_all(db, conversions)
    assert sorted(c["txid"] for c in stored) == ["T1", "T2"]
    assert {c["status"] for c in stored} == {"approved"}


async def test_replaying_an_orphan_counts_nothing_twice(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    orphan = await postback(client, workspace, click_id="from-email", txid="T1")

    response = await client.post(
        replay_url(workspace), json={"ids": [orphan["postback_id"]]}, headers=owner.headers
    )

    [result] = response.json()
    assert (result["outcome"], result["conversion_id"]) == ("duplicate", orphan["conversion_id"])
    assert len(await fetch_all(db, conversions)) == 1


async def test_it_refuses_entries_that_cannot_be_replayed(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, theirs = await make_owner(db)
    _, click_id = await click(client, db, workspace)
    created = await postback(client, workspace, click_id=click_id, txid="T1")
    their_failure = await postback(client, theirs, click_id="c", tipo="trial")

    counted = await client.post(
        replay_url(workspace), json={"ids": [created["postback_id"]]}, headers=owner.headers
    )
    foreign = await client.post(
        replay_url(workspace), json={"ids": [their_failure["postback_id"]]}, headers=owner.headers
    )
    empty = await client.post(replay_url(workspace), json={"ids": []}, headers=owner.headers)

    assert counted.status_code == 422
    assert "only invalid or orphan" in counted.json()["errors"]["ids"]
    assert foreign.status_code == 404
    assert (empty.status_code, list(empty.json()["errors"])) == (422, ["ids"])
    assert len(await fetch_all(db, postback_log)) == 2


async def test_a_viewer_cannot_replay(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    _, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    failed = await postback(client, workspace, click_id="c", tipo="trial")

    response = await client.post(
        replay_url(workspace), json={"ids": [failed["postback_id"]]}, headers=viewer.headers
    )

    assert response.status_code == 403
    assert len(await fetch_all(db, postback_log)) == 1
