"""The deliveries API: destinations made, verified, tested and switched; the delivery log,
retries, re-sends of a time range, and notices."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, report
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, now
from tests.web.callers import Caller, make_owner
from trilha.db.schema import deliveries, destinations
from trilha.deliveries.webhook import sign
from trilha.workspaces import Workspace


def url(workspace: Workspace, path: str = "") -> str:
    return f"/api/v1/workspaces/{workspace.id}{path}"


async def active(
    client: httpx.AsyncClient, caller: Caller, workspace: Workspace, body: dict[str, Any]
) -> dict[str, Any]:
    """A destination made through the API, once the worker has verified it."""
    made = await client.post(url(workspace, "/destinations"), json=body, headers=caller.headers)
    assert made.status_code == 201, made.text
    path = url(workspace, f"/destinations/{made.json()['id']}")

    async def verified() -> bool:
        got = await client.get(path, headers=caller.headers)
        return bool(got.json()["status"] != "verifying")

    await eventually(verified)
    shown: dict[str, Any] = (await client.get(path, headers=caller.headers)).json()
    return shown | {"signing_secret": made.json()["signing_secret"]}


async def test_a_destination_is_verified_then_active_and_its_secret_masked(
    client: httpx.AsyncClient, db: AsyncEngine, receiver: Receiver
) -> None:
    owner, workspace = await make_owner(db)

    made = await active(
        client, owner, workspace, {"name": "CRM", "kind": "webhook", "url": receiver.url("/h")}
    )

    assert (made["status"], made["status_reason"]) == ("active", "")
    secret = made["signing_secret"]
    assert secret.startswith("whsec_")
    assert made["secret"] == "••••" + secret[-4:]
    listed = await client.get(url(workspace, "/destinations"), headers=owner.headers)
    assert secret not in listed.text


async def test_a_bad_template_is_refused_naming_the_macro(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        url(workspace, "/destinations"),
        json={"name": "T", "kind": "postback", "url": "https://t.example/?c={clikid}"},
        headers=owner.headers,
    )

    assert response.status_code == 422
    assert response.json()["errors"] == {"url": "unknown macro {clikid}"}
    assert await fetch_all(db, destinations) == []


async def test_send_test_shows_the_receivers_answer(
    client: httpx.AsyncClient, db: AsyncEngine, receiver: Receiver
) -> None:
    owner, workspace = await make_owner(db)
    made = await active(
        client,
        owner,
        workspace,
        {"name": "K", "kind": "postback", "url": receiver.url("/404?cid={sub1}&p={payout}")},
    )

    response = await client.post(
        url(workspace, f"/destinations/{made['id']}/test"), headers=owner.headers
    )

    assert response.status_code == 200
    assert response.json() | {"latency_ms": 0} == {
        "outcome": "rejected",
        "request": f"GET {receiver.url('/404?cid=test&p=97.00')}",
        "status_code": 404,
        "latency_ms": 0,
        "response": "answer 404",
        "error": "",
    }
    assert await fetch_all(db, deliveries) == []


async def test_the_log_shows_each_attempt_and_a_failed_delivery_can_be_retried(
    client: httpx.AsyncClient, db: AsyncEngine, receiver: Receiver
) -> None:
    owner, workspace = await make_owner(db)
    made = await active(
        client, owner, workspace, {"name": "K", "kind": "postback", "url": receiver.url("/404")}
    )
    click = await click_on(client, db, workspace)
    await report(client, workspace, click["id"])

    async def failed() -> bool:
        page = await client.get(
            url(workspace, "/deliveries"), params={"state": "failed"}, headers=owner.headers
        )
        return bool(page.json()["deliveries"])

    await eventually(failed)
    page = (await client.get(url(workspace, "/deliveries"), headers=owner.headers)).json()
    [listed] = page["deliveries"]
    assert (listed["destination_name"], listed["last_error"]) == ("K", "HTTP 404")
    retried = await client.post(
        url(workspace, f"/deliveries/{listed['id']}/retry"), headers=owner.headers
    )
    assert retried.json()["state"] == "pending"
    await eventually(lambda: _at_least(receiver, "/404", 2))

    async def two_attempts() -> bool:
        detail = await client.get(
            url(workspace, f"/deliveries/{listed['id']}"), headers=owner.headers
        )
        return len(detail.json()["attempts_log"]) == 2

    await eventually(two_attempts)
    assert made["id"] == listed["destination_id"]


async def test_a_late_destination_gets_the_earlier_sales_on_resend(
    client: httpx.AsyncClient, db: AsyncEngine, receiver: Receiver
) -> None:
    owner, workspace = await make_owner(db)
    for n in range(3):
        click = await click_on(client, db, workspace, f"?sub1=c{n}")
        await report(client, workspace, click["id"], txid=f"T{n}")
    made = await active(
        client,
        owner,
        workspace,
        {"name": "Late", "kind": "postback", "url": receiver.url("/ok?c={sub1}")},
    )
    assert await fetch_all(db, deliveries) == []

    window = {"since": (now() - timedelta(hours=1)).isoformat(), "until": now().isoformat()}
    response = await client.post(
        url(workspace, f"/destinations/{made['id']}/resend"), json=window, headers=owner.headers
    )

    assert response.json() == {"queued": 3}
    await eventually(lambda: _at_least(receiver, "/ok", 3))
    assert sorted(r.query["c"][0] for r in receiver.at("/ok")) == ["c0", "c1", "c2"]


async def test_a_switched_off_destination_shows_why_and_the_workspace_is_told(
    client: httpx.AsyncClient, db: AsyncEngine, receiver: Receiver
) -> None:
    owner, workspace = await make_owner(db)
    made = await active(
        client, owner, workspace, {"name": "K", "kind": "postback", "url": receiver.url("/404")}
    )
    async with db.begin() as conn:  # nine rejections already
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == made["id"])
            .values(consecutive_failures=9)
        )
    click = await click_on(client, db, workspace)
    await report(client, workspace, click["id"])

    async def told() -> bool:
        found = await client.get(url(workspace, "/notices"), headers=owner.headers)
        return bool(found.json())

    await eventually(told)
    shown = (
        await client.get(url(workspace, f"/destinations/{made['id']}"), headers=owner.headers)
    ).json()
    assert (shown["status"], shown["status_reason"]) == (
        "inactive",
        "10 rejections in a row; the last: HTTP 404",
    )
    [notice] = (await client.get(url(workspace, "/notices"), headers=owner.headers)).json()
    assert notice["message"] == (
        "Destination 'K' was switched off: 10 rejections in a row; the last: HTTP 404"
    )
    read = await client.post(url(workspace, f"/notices/{notice['id']}/read"), headers=owner.headers)
    assert read.status_code == 204
    unread = await client.get(url(workspace, "/notices?unread=true"), headers=owner.headers)
    assert unread.json() == []

    again = await client.post(
        url(workspace, f"/destinations/{made['id']}/activate"), headers=owner.headers
    )
    assert (again.json()["status"], again.json()["consecutive_failures"]) == ("verifying", 0)


async def _at_least(receiver: Receiver, path: str, count: int) -> bool:
    return len(receiver.at(path)) >= count


async def test_a_rotated_webhook_secret_signs_beside_the_old_one_for_a_day(
    client: httpx.AsyncClient, db: AsyncEngine, receiver: Receiver
) -> None:
    owner, workspace = await make_owner(db)
    made = await active(
        client, owner, workspace, {"name": "CRM", "kind": "webhook", "url": receiver.url("/h")}
    )
    old = made["signing_secret"]

    rotated = await client.post(
        url(workspace, f"/destinations/{made['id']}/rotate-secret"), headers=owner.headers
    )
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["signing_secret"]
    assert new != old
    assert old not in rotated.text.replace(new, "")
    await eventually(lambda: _verified(client, owner, workspace, made["id"]))
    click = await click_on(client, db, workspace)
    await report(client, workspace, click["id"])
    await eventually(lambda: _at_least(receiver, "/h", 1))

    [request] = receiver.at("/h")
    headers = request.headers
    assert headers["webhook-signature"].split(" ") == [
        sign(new, headers["webhook-id"], int(headers["webhook-timestamp"]), request.body),
        sign(old, headers["webhook-id"], int(headers["webhook-timestamp"]), request.body),
    ]


async def _verified(
    client: httpx.AsyncClient, caller: Caller, workspace: Workspace, destination_id: str
) -> bool:
    got = await client.get(
        url(workspace, f"/destinations/{destination_id}"), headers=caller.headers
    )
    return bool(got.json()["status"] == "active")
