"""Forgetting a buyer reaches every place trilha told or kept them: the postback log, the
conversion's hashes, the delivery attempts to a tracker and to Meta and TikTok, the click's
sub-ids and parameters; on SQLite the database file and its WAL hold no byte of them after."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import signal
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import eventually, make_destination
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, fetch_clicks, make_campaign, make_workspace
from tests.postbacks.shop import make_merchant
from tests.postbacks.test_platform_hotmart import HOTTOK, purchase
from tests.test_serve import trilha_serve
from tests.web.callers import Caller, make_member
from trilha.campaigns import Campaign
from trilha.db.engine import CHECKPOINT_REFUSED, reading, truncate_wal
from trilha.db.schema import click_sub1_hours, clicks, delivery_attempts, metadata
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.reports.rollups import rebuild_rollups
from trilha.settings import Settings
from trilha.workspaces import Role, Workspace

EMAIL = "marina.souza@example.com"
PHONE = "5511987654321"  # as conversion APIs take it: BUYER's checkout phone with Brazil's code
CPF = "39053344705"
FORMS = (
    EMAIL,
    quote(EMAIL, safe=""),
    quote(quote(EMAIL, safe=""), safe=""),
    hashlib.sha256(EMAIL.encode()).hexdigest(),
    PHONE,
    "11987654321",
    "98765-4321",
    hashlib.sha256(PHONE.encode()).hexdigest(),
    CPF,
    "390.533.447-05",
    "Marina Souza",
    "Rua Coronel Quirino",
    "13025-320",
)


@pytest.fixture
def settings(settings: Settings, receiver: Receiver) -> Settings:
    return settings.model_copy(
        update={
            "meta_graph_url": receiver.url("/meta/v21.0"),
            "tiktok_events_url": receiver.url("/tiktok/v1.3"),
        }
    )


def forms_in(text: str) -> list[str]:
    """The buyer's forms ``text`` holds, in any case."""
    lowered = text.lower()
    return [form for form in FORMS if form.lower() in lowered]


async def stored_text(db: AsyncEngine) -> str:
    """Every row of every table, as text."""
    async with db.connect() as conn:
        rows = [
            dict(row)
            for table in metadata.sorted_tables
            for row in (await conn.execute(select(table))).mappings()
        ]
    return json.dumps(rows, default=str, ensure_ascii=False)


async def deletes_securely(db: AsyncEngine) -> bool:
    """Whether the engine's SQLite connections overwrite what they delete (PostgreSQL: n/a)."""
    if db.dialect.name != "sqlite":
        return True
    async with db.connect() as conn:
        return bool((await conn.exec_driver_sql("PRAGMA secure_delete")).scalar())


def database_files(db: AsyncEngine) -> dict[str, bytes]:
    """On SQLite, the bytes of the database file and of its WAL; nothing on PostgreSQL."""
    if db.dialect.name != "sqlite":
        return {}
    path = Path(str(make_url(str(db.url)).database))
    files = (path, path.with_name(path.name + "-wal"))
    return {file.name: file.read_bytes() for file in files if file.exists()}


@dataclass(frozen=True, slots=True)
class Shop:
    workspace: Workspace
    owner: Caller
    campaign: Campaign


async def open_shop(db: AsyncEngine, settings: Settings, receiver: Receiver) -> Shop:
    """A Hotmart merchant, a campaign, and three destinations: a tracker whose URL uses {sub1},
    Meta and TikTok."""
    workspace = await make_workspace(db)
    owner = await make_member(db, workspace, Role.OWNER)
    await make_merchant(db, workspace, preset="hotmart", secret=HOTTOK)
    for spec in (
        Spec("Tracker", Kind.POSTBACK, receiver.url("/tracker?aff={sub1}&tx={txid}")),
        Spec("Meta", Kind.META_CAPI, secret="EAAB-meta-token", config={"pixel_id": "1234567890"}),
        Spec(
            "TikTok", Kind.TIKTOK_EVENTS, secret="tt-token", config={"pixel_code": "C4ABCDEF12345"}
        ),
    ):
        await make_destination(db, workspace, spec, settings=settings)
    campaign = await make_campaign(db, workspace, offer_url="https://pay.example/?sck={click_id}")
    return Shop(workspace, owner, campaign)


async def buy_then_forget(
    http: httpx.AsyncClient, db: AsyncEngine, shop: Shop, receiver: Receiver
) -> httpx.Response:
    """The buyer clicks (their e-mail in sub1, as affiliates do, and URL-encoded in another
    parameter) and buys; once every destination is told, the owner forgets them."""
    workspace, owner = shop.workspace, shop.owner
    await http.patch(  # the log keeps the buyer whole: name, CPF, address
        f"/api/v1/workspaces/{workspace.id}", json={"keeps_buyer_data": True}, headers=owner.headers
    )
    visit = await http.get(
        f"/r/{shop.campaign.slug}", params={"sub1": EMAIL, "ref": quote(EMAIL, safe="")}
    )
    [click_id] = parse_qs(urlsplit(visit.headers["location"]).query)["sck"]
    sale = purchase("PURCHASE_APPROVED", "APPROVED", origin={"sck": click_id})
    sold = await http.post(
        "/pb/hotmart",
        params={"token": workspace.postback_token},
        json=sale,
        headers={"X-HOTMART-HOTTOK": HOTTOK},
    )
    assert sold.json()["status"] == "created"

    async def all_sent() -> bool:
        return len(await fetch_all(db, delivery_attempts)) == 3

    await eventually(all_sent, timeout=10)
    [tracker] = receiver.at("/tracker")
    assert tracker.query["aff"] == [EMAIL]
    assert set(forms_in(await stored_text(db))) >= {EMAIL, CPF, FORMS[3], FORMS[7]}
    return await http.post(
        f"/api/v1/workspaces/{workspace.id}/buyers/forget",
        json={"email": EMAIL.upper()},
        headers=owner.headers,
    )


async def assert_forgotten_everywhere(db: AsyncEngine, forgotten: httpx.Response) -> None:
    assert forgotten.json() == {
        "log_entries": 1,
        "conversions": 1,
        "delivery_attempts": 3,
        "clicks": 1,
        "unmatched_samples": 0,
    }
    assert forms_in(await stored_text(db)) == []
    assert await deletes_securely(db)
    for name, content in database_files(db).items():
        assert forms_in(content.decode("latin-1")) == [], name
    [click] = await fetch_clicks(db)
    assert (click["sub1"], click["params"]["ref"]) == ("[forgotten]", "[forgotten]")
    [counted] = await fetch_all(db, click_sub1_hours)
    assert (counted["sub1"], counted["clicks"]) == ("[forgotten]", 1)  # still counted
    attempts: list[dict[str, Any]] = await fetch_all(db, delivery_attempts)
    assert {(a["outcome"], a["request"]) for a in attempts} == {("success", "[forgotten]")}


async def test_a_forgotten_buyer_is_in_no_row_no_database_file_and_no_log(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    settings: Settings,
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    shop = await open_shop(db, settings, receiver)

    forgotten = await buy_then_forget(client, db, shop, receiver)

    await assert_forgotten_everywhere(db, forgotten)
    assert forms_in(caplog.text) == []


async def test_a_real_server_forgets_the_buyer_and_never_logs_them(
    database_url: str, db: AsyncEngine, settings: Settings, receiver: Receiver, tmp_path: Path
) -> None:
    shop = await open_shop(db, settings, receiver)
    server = {
        "delivery_allow_private": "true",
        "delivery_poll_interval": "0.2",
        "meta_graph_url": settings.meta_graph_url,
        "tiktok_events_url": settings.tiktok_events_url,
        "log_level": "debug",
    }

    with trilha_serve(database_url, tmp_path, **server) as (base, process):
        async with httpx.AsyncClient(base_url=base) as http:
            forgotten = await buy_then_forget(http, db, shop, receiver)
        await assert_forgotten_everywhere(db, forgotten)  # while it still serves
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=10)

    assert "serving: " in output
    assert forms_in(output) == []


async def rollup_rows(db: AsyncEngine) -> list[tuple[Any, ...]]:
    rows = await fetch_all(db, click_sub1_hours)
    return sorted((r["campaign_id"], r["hour"], r["sub1"], r["clicks"]) for r in rows)


async def test_the_buyer_s_phone_in_a_sub_id_is_found_however_written_and_clicks_stay_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    owner = await make_member(db, workspace, Role.OWNER)
    await make_merchant(db, workspace, preset="hotmart", secret=HOTTOK)
    campaign = await make_campaign(db, workspace, offer_url="https://pay.example/?sck={click_id}")
    visit = await client.get(
        f"/r/{campaign.slug}", params={"sub1": EMAIL, "sub2": "(11) 98765-4321", "sub3": "kept"}
    )
    await client.get(f"/r/{campaign.slug}", params={"sub1": f"lead-{EMAIL.upper()}"})
    await client.get(f"/r/{campaign.slug}", params={"sub1": "someone-else"})
    [click_id] = parse_qs(urlsplit(visit.headers["location"]).query)["sck"]
    sale = purchase("PURCHASE_APPROVED", "APPROVED", origin={"sck": click_id})
    await client.post(
        "/pb/hotmart",
        params={"token": workspace.postback_token},
        json=sale,
        headers={"X-HOTMART-HOTTOK": HOTTOK},
    )

    forgotten = await client.post(
        f"/api/v1/workspaces/{workspace.id}/buyers/forget",
        json={"email": EMAIL},
        headers=owner.headers,
    )

    assert forgotten.json()["clicks"] == 2
    subs = sorted((c["sub1"], c["sub2"] or "", c["sub3"] or "") for c in await fetch_clicks(db))
    assert subs == [
        ("[forgotten]", "", ""),
        ("[forgotten]", "[forgotten]", "kept"),
        ("someone-else", "", ""),
    ]
    counted = await rollup_rows(db)
    assert [(sub1, n) for _, _, sub1, n in counted] == [("[forgotten]", 2), ("someone-else", 1)]
    async with db.begin() as conn:
        await conn.run_sync(rebuild_rollups, workspace_id=workspace.id)
    assert await rollup_rows(db) == counted  # as if the clicks had come so


async def test_a_forget_while_a_long_read_holds_the_wal_says_it_could_not_truncate_it(
    client: httpx.AsyncClient, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = await make_workspace(db)
    owner = await make_member(db, workspace, Role.OWNER)

    async with reading(db).connect() as reader:
        await reader.execute(select(clicks.c.id))  # a read transaction, left open
        forgotten = await client.post(
            f"/api/v1/workspaces/{workspace.id}/buyers/forget",
            json={"email": EMAIL},
            headers=owner.headers,
        )

    assert forgotten.status_code == 200  # what it erased is committed all the same
    warned = [r.getMessage()[:30] for r in caplog.records if r.name == "trilha.web.auth"]
    # PostgreSQL has no WAL file of trilha's to truncate.
    assert warned == (["the WAL could not be truncated"] if db.dialect.name == "sqlite" else [])


def checkpoint_refused(path: str) -> bool:
    """Whether a checkpoint on the file is refused at once: another connection checkpoints."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as probe:
        return tuple(probe.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()) == (
            CHECKPOINT_REFUSED
        )


async def test_the_wal_is_truncated_once_another_connection_s_checkpoint_lets_go(
    db: AsyncEngine, database_url: str
) -> None:
    await make_workspace(db)  # frames in the WAL
    if db.dialect.name != "sqlite":
        assert await truncate_wal(db)  # PostgreSQL has no WAL file of trilha's
        return
    path = str(make_url(database_url).database)
    reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM workspaces").fetchone()  # a read, on the latest frames
    # Another connection's checkpoint holds the checkpoint lock while it waits for that read,
    # then gives up after its busy timeout; the read ends after.
    other = sqlite3.connect(path, isolation_level=None, timeout=1.0, check_same_thread=False)

    def checkpoint_then_end_the_read() -> None:
        while tuple(other.execute("PRAGMA wal_checkpoint(RESTART)").fetchone()) == (
            CHECKPOINT_REFUSED
        ):  # refused by the probe below, checking at that moment
            pass
        reader.execute("COMMIT")

    checkpointing = asyncio.create_task(asyncio.to_thread(checkpoint_then_end_the_read))
    try:
        while not checkpoint_refused(path):
            assert not checkpointing.done(), "the other checkpoint never held its lock"
            await asyncio.sleep(0.01)

        truncated = await truncate_wal(db)  # begun while the other checkpoint runs
    finally:
        await checkpointing
        other.close()
        reader.close()

    assert truncated
    assert Path(path + "-wal").stat().st_size == 0
