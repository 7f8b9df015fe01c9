"""Counted once across processes: identical postbacks racing over real HTTP to two workers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign, make_workspace
from tests.faults.server import Server
from trilha.db.schema import conversions, postback_log

CONCURRENCY = 100


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    server = Server(database_url, tmp_path, workers=2)
    server.start()
    yield server
    server.kill()


async def test_a_hundred_concurrent_identical_postbacks_to_two_workers_make_one_conversion(
    server: Server, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://o.example.com/?c={click_id}")
    # One connection per request: the kernel hands them to both workers.
    limits = httpx.Limits(max_connections=CONCURRENCY)
    async with httpx.AsyncClient(base_url=server.base, limits=limits, timeout=30) as http:
        location = (await http.get("/r/lp")).headers["location"]
        params = {
            "token": workspace.postback_token,
            "click_id": location.removeprefix("https://o.example.com/?c="),
            "txid": "RACE",
            "payout": "10",
        }

        responses = await asyncio.gather(
            *(http.get("/postback", params=params) for _ in range(CONCURRENCY))
        )

    outcomes = sorted(r.json()["status"] for r in responses)
    assert outcomes == ["created"] + ["duplicate"] * (CONCURRENCY - 1)
    [conversion] = await fetch_all(db, conversions)
    assert conversion["txid"] == "RACE"
    assert len(await fetch_all(db, postback_log)) == CONCURRENCY
