"""Deliveries' fixtures: the app with a worker that may reach 127.0.0.1 (where the receiver
listens), the receiver itself, and helpers to make a click and report a sale on it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import settings_for
from tests.deliveries.receiver import Canary, Receiver
from tests.dns_server import DnsServer
from tests.factories import fetch_clicks, make_campaign
from trilha.deliveries.build import Endpoints
from trilha.deliveries.destination import Destination
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.verify import verify_destinations
from trilha.settings import Settings
from trilha.workspaces import Workspace


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return settings_for(database_url, dns_server).model_copy(
        update={
            "delivery_allow_private": True,
            "delivery_poll_interval": 0.2,
            "delivery_timeout": 2.0,
            "delivery_lease_seconds": 30,
        }
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def canary() -> Iterator[Canary]:
    port = Canary()
    yield port
    port.close()


async def make_destination(
    db: AsyncEngine, workspace: Workspace, spec: Spec, *, settings: Settings | None = None
) -> Destination:
    """A destination, verified at once (as the worker would) when ``settings`` are given."""
    async with db.begin() as conn:
        destination = await create_destination(conn, workspace, spec, now=datetime.now(UTC))
    if settings is not None:
        await verify_destinations(
            db,
            endpoints=Endpoints.from_settings(settings),
            allow_private=settings.delivery_allow_private,
            now=datetime.now(UTC),
        )
    return destination


async def click_on(
    client: httpx.AsyncClient, db: AsyncEngine, workspace: Workspace, query: str = ""
) -> dict[str, Any]:
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}{query}")
    rows = await fetch_clicks(db, campaign_id=campaign.id)
    return rows[-1]


async def report(
    client: httpx.AsyncClient,
    workspace: Workspace,
    click_id: str,
    *,
    txid: str = "T1",
    status: str = "approved",
    payout: str = "97,00",
) -> dict[str, Any]:
    response = await client.get(
        "/pb",
        params={
            "token": workspace.postback_token,
            "click_id": click_id,
            "tipo": "venda",
            "payout": payout,
            "txid": txid,
            "status": status,
        },
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> float:
    """Wait until ``check`` holds; the seconds it took. Fails after ``timeout``."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s")
        await asyncio.sleep(0.02)
    return time.monotonic() - started
