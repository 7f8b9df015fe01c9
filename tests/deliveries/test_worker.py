"""The worker: a conversion reaches the receiver with its macros filled, every attempt is recorded,
temporary failures are retried on the schedule, rejections switch a destination off."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Canary, Receiver
from tests.factories import fetch_all, make_workspace
from trilha.db.schema import deliveries, delivery_attempts, destinations, notices
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.settings import Settings


async def sent_to(receiver: Receiver, path: str, count: int = 1) -> float:
    async def arrived() -> bool:
        return len(receiver.at(path)) >= count

    return await eventually(arrived)


async def test_it_sends_a_postback_with_its_macros_filled(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    url = receiver.url(
        "/ok?cid={sub1}&p={payout}&c={currency}&tx={txid}&s={status}&e={event}&id={conversion_id}"
    )
    await make_destination(db, workspace, Spec("Tracker", Kind.POSTBACK, url), settings=settings)
    click = await click_on(client, db, workspace, "?sub1=kt-123")

    body = await report(client, workspace, click["id"])
    await sent_to(receiver, "/ok")  # how soon: bench/deliveries.py measures it

    [request] = receiver.at("/ok")
    assert request.method == "GET"
    assert {k: v[0] for k, v in request.query.items()} == {
        "cid": "kt-123",
        "p": "97.00",
        "c": "BRL",
        "tx": "T1",
        "s": "approved",
        "e": "SALE",
        "id": body["conversion_id"],
    }

    async def recorded() -> bool:
        return bool(await fetch_all(db, delivery_attempts))

    await eventually(recorded)
    [delivery] = await fetch_all(db, deliveries)
    assert (delivery["state"], delivery["attempts"], delivery["lease_until"]) == ("sent", 1, None)
    [attempt] = await fetch_all(db, delivery_attempts)
    assert (attempt["outcome"], attempt["status_code"]) == ("success", 200)
    assert attempt["request"].startswith(f"GET http://127.0.0.1:{receiver.port}/ok?cid=kt-123")
    assert attempt["response"] == "answer 200"


async def test_ten_rejections_in_a_row_switch_a_destination_off(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    destination = await make_destination(
        db, workspace, Spec("Tracker", Kind.POSTBACK, receiver.url("/{sub1}")), settings=settings
    )
    # 9 rejections, a success (which resets the count), then 10 rejections.
    paths = ["404"] * 9 + ["ok"] + ["404"] * 9 + ["410"]
    for n, path in enumerate(paths):
        click = await click_on(client, db, workspace, f"?sub1={path}")
        await report(client, workspace, click["id"], txid=f"T{n}")
        await sent_to(receiver, f"/{path}", paths[: n + 1].count(path))

        async def recorded(n: int = n) -> bool:
            return len(await fetch_all(db, delivery_attempts)) == n + 1

        await eventually(recorded)
        [row] = await fetch_all(db, destinations, id=destination.id)
        if n < len(paths) - 1:
            assert row["status"] == "active", n

    [row] = await fetch_all(db, destinations, id=destination.id)
    assert row["status"] == "inactive"
    assert row["status_reason"] == "10 rejections in a row; the last: HTTP 410"
    [notice] = await fetch_all(db, notices)
    assert notice["destination_id"] == destination.id
    assert "10 rejections in a row" in notice["message"]
    click = await click_on(client, db, workspace, "?sub1=ok")
    await report(client, workspace, click["id"], txid="after")
    assert len(await fetch_all(db, deliveries)) == len(paths)  # an inactive one gets nothing


async def attempt_on(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, url: str
) -> tuple[dict[str, Any], dict[str, Any], datetime]:
    """Report a sale to a destination at ``url``; its delivery and attempt once recorded."""
    workspace = await make_workspace(db)
    await make_destination(db, workspace, Spec("Tracker", Kind.POSTBACK, url), settings=settings)
    click = await click_on(client, db, workspace)
    await report(client, workspace, click["id"])

    async def recorded() -> bool:
        return bool(await fetch_all(db, delivery_attempts))

    await eventually(recorded)
    [delivery] = await fetch_all(db, deliveries)
    [attempt] = await fetch_all(db, delivery_attempts)
    return delivery, attempt, attempt["started_at"]


async def test_a_429_is_tried_again_when_retry_after_says(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    delivery, attempt, at = await attempt_on(client, db, settings, receiver.url("/429"))

    assert (attempt["outcome"], attempt["status_code"]) == ("temporary", 429)
    assert (delivery["state"], delivery["attempts"]) == ("pending", 1)
    assert delivery["next_attempt_at"] - at == timedelta(seconds=2)
    await sent_to(receiver, "/429", 2)  # and it is, two seconds later


async def test_a_server_error_is_tried_again_on_the_schedule(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    delivery, attempt, at = await attempt_on(client, db, settings, receiver.url("/500"))

    assert (attempt["outcome"], attempt["status_code"]) == ("temporary", 500)
    assert delivery["state"] == "pending"
    assert timedelta(seconds=8) <= delivery["next_attempt_at"] - at <= timedelta(seconds=12)
    assert delivery["last_error"] == "HTTP 500"


async def test_a_receiver_that_hangs_times_out_and_is_tried_again(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    delivery, attempt, _ = await attempt_on(client, db, settings, receiver.url("/hang"))

    assert (attempt["outcome"], attempt["status_code"], attempt["error"]) == (
        "temporary",
        None,
        "timed out",
    )
    assert attempt["latency_ms"] >= 1900  # it waited TRILHA_DELIVERY_TIMEOUT, 2 s here
    assert delivery["state"] == "pending"


async def test_a_redirect_is_never_followed_and_counts_as_a_rejection(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    settings: Settings,
    receiver: Receiver,
    canary: Canary,
) -> None:
    receiver.redirect_to = f"http://127.0.0.1:{canary.port}/"

    delivery, attempt, _ = await attempt_on(client, db, settings, receiver.url("/redirect"))

    assert (attempt["outcome"], attempt["status_code"]) == ("rejected", 302)
    assert attempt["error"] == f"redirect to http://127.0.0.1:{canary.port}/, not followed"
    assert delivery["state"] == "failed"
    assert canary.connections == 0
    [row] = await fetch_all(db, destinations)
    assert row["consecutive_failures"] == 1
