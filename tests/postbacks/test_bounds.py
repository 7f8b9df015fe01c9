"""Postbacks whose fields are longer than their columns: stored bounded, never a 503."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.apps import running_client
from tests.factories import fetch_all, make_workspace
from tests.postbacks.test_receive import click_on
from trilha.db.bounds import max_lengths
from trilha.db.schema import conversions, postback_log
from trilha.settings import Settings


async def test_a_postback_with_an_over_long_amount_is_stored_bounded_not_refused(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    amount = "97." + "0" * 60 + "1"

    response = await client.get(
        "/pb",
        params={
            "token": workspace.postback_token,
            "click_id": click_id,
            "payout": amount,
            "txid": "T1",
        },
    )

    assert response.status_code == 200
    assert response.json()["status"] == "created"
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["click_id"], conversion["value_minor"]) == (click_id, 9700)
    [entry] = await fetch_all(db, postback_log)
    assert entry["value"] == "97.00"  # in the currency's minor unit
    assert amount in entry["query"]  # the request as received keeps it whole


async def test_a_postback_from_an_over_long_forwarded_address_is_stored_bounded(
    database_url: str, db: AsyncEngine
) -> None:
    settings = Settings(
        database_url=database_url,
        public_url="http://testserver",
        trusted_proxies="198.51.100.0/24",
        _env_file=None,
    )
    workspace = await make_workspace(db)
    forwarded = "fe80::1%" + "z" * 80  # an IPv6 address with a zone: any length

    async with running_client(settings) as client:
        click_id = await click_on(client, db, workspace)
        response = await client.get(
            "/pb",
            params={"token": workspace.postback_token, "click_id": click_id, "txid": "T1"},
            headers={"x-forwarded-for": forwarded},
        )

    assert response.status_code == 200
    [entry] = await fetch_all(db, postback_log)
    assert entry["source_ip"] == forwarded[: max_lengths(postback_log)["source_ip"]]
