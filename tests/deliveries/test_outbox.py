"""The outbox: a conversion's change and the deliveries it calls for commit together, and only
the destinations whose filters it passes get one."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, make_destination, report
from tests.factories import fetch_all, make_campaign, make_source, make_workspace, now
from trilha.conversions.orphans import attach_orphan
from trilha.conversions.status import Status
from trilha.db.schema import deliveries
from trilha.deliveries.destinations import Spec, deactivate_destination
from trilha.deliveries.kinds import Kind
from trilha.settings import Settings


async def test_it_queues_a_delivery_with_the_conversion(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    destination = await make_destination(
        db,
        workspace,
        Spec("Tracker", Kind.POSTBACK, "http://127.0.0.1:9/pb?cid={sub1}"),
        settings=settings,
    )
    click = await click_on(client, db, workspace)

    body = await report(client, workspace, click["id"])

    [delivery] = await fetch_all(db, deliveries)
    assert (delivery["destination_id"], delivery["conversion_id"]) == (
        destination.id,
        body["conversion_id"],
    )
    assert (delivery["conversion_status"], delivery["state"]) == ("approved", "pending")


async def test_a_refund_queues_a_delivery_of_its_own(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    await make_destination(
        db,
        workspace,
        Spec("Tracker", Kind.POSTBACK, "http://127.0.0.1:9/pb?s={status}"),
        settings=settings,
    )
    click = await click_on(client, db, workspace)

    await report(client, workspace, click["id"])
    await report(client, workspace, click["id"], status="refunded")
    await report(client, workspace, click["id"], status="refunded")  # a repeat: nothing new

    rows = await fetch_all(db, deliveries)
    assert sorted(r["conversion_status"] for r in rows) == ["approved", "refunded"]


async def test_only_matching_destinations_get_a_delivery(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    source = await make_source(db, workspace)
    other_campaign = await make_campaign(db, workspace)
    url = "http://127.0.0.1:9/pb"
    wanted = [
        await make_destination(db, workspace, Spec("All", Kind.POSTBACK, url), settings=settings),
        await make_destination(
            db,
            workspace,
            Spec(
                "Sales approved",
                Kind.POSTBACK,
                url,
                event_types=("SALE",),
                statuses=(Status.APPROVED,),
            ),
            settings=settings,
        ),
        await make_destination(
            db, workspace, Spec("Sub", Kind.POSTBACK, url, sub_id="aff-7"), settings=settings
        ),
    ]
    for spec in (
        Spec("Leads", Kind.POSTBACK, url, event_types=("LEAD",)),
        Spec("Refunds", Kind.POSTBACK, url, statuses=(Status.REFUNDED,)),
        Spec("Other campaign", Kind.POSTBACK, url, campaign_id=other_campaign.id),
        Spec("Other source", Kind.POSTBACK, url, source_id=source.id),
        Spec("Other sub", Kind.POSTBACK, url, sub_id="aff-8"),
        Spec(
            "Sub and other campaign",
            Kind.POSTBACK,
            url,
            sub_id="aff-7",
            campaign_id=other_campaign.id,
        ),
    ):
        await make_destination(db, workspace, spec, settings=settings)
    switched_off = await make_destination(db, workspace, Spec("Off", Kind.POSTBACK, url))
    async with db.begin() as conn:
        await deactivate_destination(conn, workspace, switched_off.id, now=now())
    click = await click_on(client, db, workspace, "?sub1=aff-7")

    await report(client, workspace, click["id"])

    rows = await fetch_all(db, deliveries)
    assert {r["destination_id"] for r in rows} == {d.id for d in wanted}


async def test_orphans_are_told_to_no_one(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    await make_destination(
        db, workspace, Spec("All", Kind.POSTBACK, "http://127.0.0.1:9/pb"), settings=settings
    )

    body = await report(client, workspace, "no-such-click")

    assert body["status"] == "orphan"
    assert await fetch_all(db, deliveries) == []


async def test_an_orphan_attached_to_its_click_is_told_as_it_stands(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    destination = await make_destination(
        db, workspace, Spec("All", Kind.POSTBACK, "http://127.0.0.1:9/pb"), settings=settings
    )
    body = await report(client, workspace, "from-email", txid="T1")
    await report(client, workspace, "from-email", txid="T1", status="refunded")
    click = await click_on(client, db, workspace)
    assert await fetch_all(db, deliveries) == []

    async with db.begin() as conn:
        await conn.run_sync(
            attach_orphan, workspace.id, body["conversion_id"], click["id"], now=now()
        )

    [delivery] = await fetch_all(db, deliveries)
    assert (delivery["destination_id"], delivery["conversion_id"]) == (
        destination.id,
        body["conversion_id"],
    )
    assert delivery["conversion_status"] == "refunded"


async def test_a_destination_added_between_postbacks_gets_the_next_one(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    first = await click_on(client, db, workspace)
    await report(client, workspace, first["id"], txid="T1")  # read no destination then
    destination = await make_destination(
        db, workspace, Spec("Late", Kind.POSTBACK, "http://127.0.0.1:9/pb"), settings=settings
    )
    second = await click_on(client, db, workspace)

    body = await report(client, workspace, second["id"], txid="T2")

    [delivery] = await fetch_all(db, deliveries)
    assert (delivery["destination_id"], delivery["conversion_id"]) == (
        destination.id,
        body["conversion_id"],
    )
