"""Sales in other currencies through real postbacks: converted at the ECB's rate of their day,
or left out until the workspace adds a rate for a currency the ECB lacks, which converts them
once; a later rate never changes a converted sale."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.callers import Caller, make_owner
from tests.web.sales import click, postback
from trilha.currencies import ecb_rate
from trilha.workspaces import Workspace


async def conversion(
    client: httpx.AsyncClient, caller: Caller, workspace: Workspace, conversion_id: str
) -> Any:
    url = f"/api/v1/workspaces/{workspace.id}/conversions/{conversion_id}"
    response = await client.get(url, headers=caller.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def totals(client: httpx.AsyncClient, caller: Caller, workspace: Workspace) -> Any:
    response = await client.get(
        f"/api/v1/workspaces/{workspace.id}/reports",
        params={"preset": "today", "group_by": "campaign"},
        headers=caller.headers,
    )
    report = response.json()
    return report["totals"]["approved_revenue"], report["other_currency"]


async def test_a_dollar_sale_counts_at_the_ecb_rate_of_its_day(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    _, click_id = await click(client, db, workspace)
    answer = await postback(
        client, workspace, click_id=click_id, txid="US1", payout="19.99", currency="USD"
    )

    sale = await conversion(client, owner, workspace, answer["conversion_id"])
    rate = ecb_rate("USD", "BRL", datetime.now(UTC).date())
    assert rate is not None
    assert (sale["value"], sale["currency"]) == ("19.99", "USD")
    assert (sale["report_currency"], sale["rate_source"]) == ("BRL", "ecb")
    assert Decimal(sale["rate"]) == rate
    expected = (Decimal("19.99") * rate).quantize(Decimal("0.01"))
    assert abs(Decimal(sale["report_value"]) - expected) <= Decimal("0.01")
    assert await totals(client, owner, workspace) == (sale["report_value"], 0)


async def test_a_currency_without_a_rate_waits_for_the_workspace_s_own(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    rates = f"/api/v1/workspaces/{workspace.id}/rates"
    _, click_id = await click(client, db, workspace)
    answer = await postback(
        client, workspace, click_id=click_id, txid="AR1", payout="10000", currency="ARS"
    )
    waiting = await conversion(client, owner, workspace, answer["conversion_id"])
    assert (waiting["report_value"], waiting["rate_source"]) == (None, None)
    assert await totals(client, owner, workspace) == ("0.00", 1)

    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    saved = await client.put(
        rates, json={"currency": "ars", "day": yesterday, "rate": "0.0055"}, headers=owner.headers
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["converted"] == 1
    assert saved.json()["rate"]["currency"] == "ARS"
    converted = await conversion(client, owner, workspace, answer["conversion_id"])
    assert (converted["report_value"], converted["rate_source"]) == ("55.00", "workspace")
    assert await totals(client, owner, workspace) == ("55.00", 0)

    today = datetime.now(UTC).date().isoformat()
    later = await client.put(
        rates, json={"currency": "ARS", "day": today, "rate": "0.006"}, headers=owner.headers
    )
    assert later.json()["converted"] == 0
    listed = (await client.get(rates, headers=owner.headers)).json()["rates"]
    assert [(r["day"], r["rate"]) for r in listed] == [
        (today, "0.0060000000"),
        (yesterday, "0.0055000000"),
    ]
    deleted = await client.delete(f"{rates}/{listed[1]['id']}", headers=owner.headers)
    assert deleted.status_code == 204
    assert (await conversion(client, owner, workspace, answer["conversion_id"]))[
        "report_value"
    ] == "55.00"
    assert (
        await client.delete(f"{rates}/{listed[1]['id']}", headers=owner.headers)
    ).status_code == 404


async def test_a_bad_rate_names_every_problem(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    rates = f"/api/v1/workspaces/{workspace.id}/rates"
    own = await client.put(
        rates, json={"currency": "BRL", "day": "2026-12-01", "rate": "1"}, headers=owner.headers
    )
    assert own.status_code == 422
    assert own.json()["errors"] == {"currency": "is the workspace's own currency"}
    bad = await client.put(
        rates, json={"currency": "ZZZ", "day": "2026-13-01", "rate": "0"}, headers=owner.headers
    )
    assert bad.status_code == 422
    assert set(bad.json()["errors"]) >= {"day", "rate"}
    assert (await client.get(rates, headers=owner.headers)).json()["rates"] == []
