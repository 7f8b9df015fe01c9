"""The home screen's health signals (seed 002), from real clicks and postbacks sent through HTTP,
read as of now and as of two days later: invalid postbacks that jumped, a source and a merchant
that went quiet, and clicks with no postback at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign, make_source
from tests.web.callers import make_owner
from tests.web.sales import click, create_merchant, postback
from trilha.reports.home import Health, Signal, health
from trilha.workspaces import Workspace


async def read_health(db: AsyncEngine, workspace: Workspace, now: datetime) -> Health:
    async with db.connect() as conn:
        result: Health = await conn.run_sync(health, workspace.id, now=now)
        return result


async def test_invalid_postbacks_that_jump_are_a_signal_and_quiet_ones_are_named(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await create_merchant(client, owner, workspace, key="loja", preset="generic")
    source = await make_source(db, workspace, name="Facebook")
    campaign = await make_campaign(db, workspace, source_id=source.id)
    _, click_id = await click(client, db, workspace, campaign)
    await postback(client, workspace, "/pb/loja", click_id=click_id, txid="A")
    for n in range(3):  # an event type the mapping does not know: invalid
        await postback(client, workspace, "/pb/loja", click_id=click_id, txid=f"B{n}", tipo="x")

    now = datetime.now(UTC)
    today = await read_health(db, workspace, now)
    assert today.outcomes == {"created": 1, "invalid": 3}
    assert today.signals == [(Signal.INVALID, "75%")]

    later = await read_health(db, workspace, now + timedelta(days=2))
    assert later.outcomes == {}
    assert later.signals == [
        (Signal.SOURCE_STOPPED, "Facebook"),
        (Signal.MERCHANT_STOPPED, "Loja loja"),
    ]
    assert (await read_health(db, workspace, now + timedelta(days=9))).signals == []


async def test_people_clicking_with_no_postback_at_all_is_a_signal(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    iphone = (
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Version/17.0 Mobile Safari/604.1"
    )
    for _ in range(19):
        response = await client.get(f"/r/{campaign.slug}", headers={"user-agent": iphone})
        assert response.status_code == 302
    now = datetime.now(UTC)
    assert (await read_health(db, workspace, now)).signals == []  # 19 clicks: too few to tell

    await client.get(f"/r/{campaign.slug}", headers={"user-agent": iphone})
    now = datetime.now(UTC)
    assert (await read_health(db, workspace, now)).signals == [(Signal.NO_POSTBACKS, "")]
    await postback(client, workspace, click_id="from-email", txid="A")  # one arrived: it is set up
    assert (await read_health(db, workspace, datetime.now(UTC))).signals == []
