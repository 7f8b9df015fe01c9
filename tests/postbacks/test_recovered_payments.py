"""A payment the platform recovers is a sale: a declined transaction later approved becomes
approved, with its history. Where the platform tells when its event happened, a report of an
older event never overwrites a newer status, whatever order they arrive in."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign, make_workspace
from tests.postbacks.shop import only_conversion, status_history
from trilha.db.schema import conversion_status_history, postback_log
from trilha.workspaces import Workspace


async def sale(client: httpx.AsyncClient, db: AsyncEngine) -> tuple[Workspace, dict[str, str]]:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}")
    [click] = await fetch_clicks(db)
    base = {"token": workspace.postback_token, "click_id": click["id"], "txid": "T1"}
    return workspace, {**base, "payout": "197.00"}


async def report(client: httpx.AsyncClient, base: dict[str, str], **params: str) -> tuple[str, str]:
    answer = (await client.get("/pb", params={**base, **params})).json()
    return answer["status"], answer["conversion_status"]


async def test_a_declined_payment_later_approved_becomes_a_sale_with_its_history(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, base = await sale(client, db)

    answers = [
        await report(client, base, status=status)
        for status in ("declined", "approved", "declined", "approved")
    ]

    assert answers == [
        ("created", "declined"),
        ("status_changed", "approved"),
        ("ignored", "approved"),  # a decline after the money came in changes nothing
        ("duplicate", "approved"),
    ]
    conversion = await only_conversion(db)
    assert (conversion["status"], conversion["value_minor"]) == ("approved", 19700)
    assert await status_history(db, conversion["id"]) == [
        (None, "declined"),
        ("declined", "approved"),
    ]


async def test_an_older_event_never_overwrites_a_newer_status(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, base = await sale(client, db)

    declined = await report(client, base, status="declined", occurred_at="2026-11-02 10:00:00")
    late_approval = await report(
        client,
        base,
        status="approved",
        occurred_at="2026-11-02T12:59:59Z",  # 09:59:59 BRT
    )
    retried = await report(client, base, status="approved", occurred_at="1793628000000")

    assert declined == ("created", "declined")
    assert late_approval == ("ignored", "declined")
    entries = sorted(await fetch_all(db, postback_log), key=lambda e: e["received_at"])
    assert entries[1]["reason"] == (
        "an event older than the current status ('2026-11-02 12:59:59' < '2026-11-02 13:00:00' "
        "UTC); ignored"
    )
    assert retried == ("status_changed", "approved")
    conversion = await only_conversion(db)
    assert conversion["status"] == "approved"
    assert conversion["status_occurred_at"] == datetime(2026, 11, 2, 14, 0, tzinfo=UTC)
    history = sorted(await fetch_all(db, conversion_status_history), key=lambda h: h["created_at"])
    assert [(h["to_status"], h["occurred_at"]) for h in history] == [
        ("declined", datetime(2026, 11, 2, 13, 0, tzinfo=UTC)),
        ("approved", datetime(2026, 11, 2, 14, 0, tzinfo=UTC)),
    ]


async def test_an_overdue_or_expired_payment_is_pending_until_it_is_paid(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, base = await sale(client, db)

    answers = [
        await report(client, base, status=status)
        for status in ("aguardando", "expirado", "atrasado", "pago")
    ]

    assert answers == [
        ("created", "pending"),
        ("duplicate", "pending"),
        ("duplicate", "pending"),
        ("status_changed", "approved"),
    ]
