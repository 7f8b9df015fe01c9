"""With TRILHA_CLICK_RETENTION_DAYS, the user agents no click holds any more go after the clicks;
a click stored while they are looked for keeps its agent."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from sqlalchemy import Connection, event, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign, move_click
from tests.test_retention import RETENTION
from tests.web.callers import make_owner
from tests.web.sales import postback
from trilha.agent_retention import delete_unused_agents, unused_agents
from trilha.campaigns import Campaign
from trilha.click_retention import purge_old_clicks
from trilha.clicks import ClickRequest, record_clicks
from trilha.db.engine import blocking_engine
from trilha.db.schema import user_agents
from trilha.links import Link, resolve_link
from trilha.maintenance import purge_expired_clicks
from trilha.visitors import Visitor, agent_key, parse_device

OLD = timedelta(days=40)


async def click_as(
    client: httpx.AsyncClient, db: AsyncEngine, campaign: Campaign, agent: str, *,
    age: timedelta = timedelta(0),
) -> str:  # fmt: skip
    """A click through /r/{slug} with the user agent ``agent``, made ``age`` ago; its id."""
    response = await client.get(f"/r/{campaign.slug}", headers={"user-agent": agent})
    assert response.status_code == 302
    [click_id] = parse_qs(urlsplit(response.headers["location"]).query)["src"]
    if not age:
        return click_id
    return await move_click(db, click_id, datetime.now(UTC) - age)


async def stored_agents(db: AsyncEngine) -> set[str]:
    async with db.connect() as conn:
        return set((await conn.execute(select(user_agents.c.agent))).scalars())


async def agents_read_back(db: AsyncEngine) -> dict[str, str]:
    """Each click's user agent, as trilha reads a click (through click_view)."""
    return {row["id"]: row["user_agent"] for row in await fetch_clicks(db)}


async def unused_now(db: AsyncEngine) -> tuple[list[int], datetime]:
    """Phase one of the prune: the unused agents' keys, and when the read began."""
    read_at = datetime.now(UTC)
    async with db.connect() as conn:
        return await conn.run_sync(unused_agents), read_at


async def test_retention_takes_the_agents_only_purged_clicks_held(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await click_as(client, db, campaign, "Gone/1.0", age=OLD)
    await click_as(client, db, campaign, "Shared/1.0", age=OLD)
    shared = await click_as(client, db, campaign, "Shared/1.0")
    new = await click_as(client, db, campaign, "New/1.0")
    sold = await click_as(client, db, campaign, "Sold/1.0", age=OLD)
    answer = await postback(client, workspace, click_id=sold, txid="T1", payout="97,00")
    assert answer["status"] == "created", answer

    await purge_expired_clicks(db, days=RETENTION.days)

    assert await stored_agents(db) == {"Shared/1.0", "New/1.0", "Sold/1.0"}
    assert await agents_read_back(db) == {
        shared: "Shared/1.0",
        new: "New/1.0",
        sold: "Sold/1.0",
    }


async def test_agents_go_only_when_a_retention_is_set(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await click_as(client, db, campaign, "Gone/1.0", age=timedelta(days=400))
    await purge_old_clicks(db, older_than=datetime.now(UTC) - RETENTION)

    await purge_expired_clicks(db, days=0)
    assert await stored_agents(db) == {"Gone/1.0"}
    await purge_expired_clicks(db, days=365)
    assert await stored_agents(db) == set()


async def test_an_agent_a_click_took_up_again_after_the_read_stays(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    for agent in ("Again/1.0", "Gone/1.0"):
        await click_as(client, db, campaign, agent, age=OLD)
    await purge_old_clicks(db, older_than=datetime.now(UTC) - RETENTION)
    keys, read_at = await unused_now(db)
    assert sorted(keys) == sorted(agent_key(agent) for agent in ("Again/1.0", "Gone/1.0"))
    # Its batch finds the agent stored, so stores none: only the click names it.
    again = await click_as(client, db, campaign, "Again/1.0")

    async with db.begin() as conn:
        purged = await conn.run_sync(delete_unused_agents, keys, read_at=read_at)

    assert purged == 1
    assert await stored_agents(db) == {"Again/1.0"}
    assert await agents_read_back(db) == {again: "Again/1.0"}


def store_click(conn: Connection, campaign: Campaign, agent: str) -> dict[str, Any]:
    """A click batch of one click, as the click writer stores it."""
    link = resolve_link(conn, host="testserver", slug=campaign.slug)
    assert isinstance(link, Link)
    visitor = Visitor("198.51.100.7", agent, "", parse_device(agent), "BR")
    request = ClickRequest("testserver", campaign.slug, visitor, {}, datetime.now(UTC))
    [row] = record_clicks(conn, [(link, request)])
    return row


async def wait_for_lock(db: AsyncEngine, deleting: asyncio.Task[int], began: asyncio.Event) -> None:
    """Until the deleting transaction waits for the click batch: on PostgreSQL for its lock on
    user_agents (seen in pg_locks), on SQLite for the write lock, which its BEGIN IMMEDIATE
    (``began`` once sent) asks for while the batch holds it."""
    if db.dialect.name == "postgresql":
        waiting = text(
            "SELECT count(*) FROM pg_locks"
            " WHERE relation = CAST('user_agents' AS regclass) AND NOT granted"
        )
        for _ in range(100):
            async with db.connect() as conn:
                if (await conn.execute(waiting)).scalar_one():
                    break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the deleting transaction never waited for the click batch")
    else:
        await began.wait()
    assert not deleting.done()


async def test_an_agent_a_click_batch_in_flight_takes_up_stays(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    _, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await click_as(client, db, campaign, "Busy/1.0", age=OLD)
    await purge_old_clicks(db, older_than=datetime.now(UTC) - RETENTION)
    keys, read_at = await unused_now(db)
    assert keys == [agent_key("Busy/1.0")]

    async def delete_agents() -> int:
        async with db.begin() as conn:
            return await conn.run_sync(delete_unused_agents, keys, read_at=read_at)

    began = asyncio.Event()

    def on_begin(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.startswith("BEGIN"):
            began.set()

    # The click writer's blocking connection, as it stores a batch: the agent's INSERT finds it
    # stored and does nothing, and the click is not committed yet. Like the click writer, it
    # runs in a thread of its own: waiting for SQLite's write lock on the event loop's thread
    # would stop the app's own transactions there (the delivery worker's, every second) from
    # ever giving it up, until the busy timeout failed the batch's BEGIN IMMEDIATE.
    writer = blocking_engine(db)
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(1, thread_name_prefix="batch") as thread:
        batch = await loop.run_in_executor(thread, writer.connect)
        try:
            transaction = await loop.run_in_executor(thread, batch.begin)
            row = await loop.run_in_executor(thread, store_click, batch, campaign, "Busy/1.0")
            event.listen(db.sync_engine, "before_cursor_execute", on_begin)
            try:
                deleting = asyncio.create_task(delete_agents())
                await wait_for_lock(db, deleting, began)
            finally:
                event.remove(db.sync_engine, "before_cursor_execute", on_begin)
            await loop.run_in_executor(thread, transaction.commit)
        finally:
            await loop.run_in_executor(thread, batch.close)
    writer.dispose()

    assert await deleting == 0
    assert await stored_agents(db) == {"Busy/1.0"}
    assert await agents_read_back(db) == {row["id"]: "Busy/1.0"}
