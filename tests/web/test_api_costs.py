"""/workspaces/{id}/campaigns/{id}/costs: cost models with history, days entered or imported,
and what they add to reports, through real HTTP."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign, make_source
from tests.reports.test_api_reports import visit
from tests.web.callers import Caller, make_owner
from tests.web.sales import click, postback
from trilha.campaigns import Campaign
from trilha.db.engine import reading
from trilha.db.schema import cost_days, cost_models
from trilha.workspaces import Workspace


def costs_url(campaign: Campaign, workspace: Workspace) -> str:
    return f"/api/v1/workspaces/{workspace.id}/campaigns/{campaign.id}/costs"


def today() -> str:
    return datetime.now(ZoneInfo("America/Sao_Paulo")).date().isoformat()


def days_from_today(n: int) -> str:
    return (datetime.now(ZoneInfo("America/Sao_Paulo")).date() + timedelta(days=n)).isoformat()


async def todays_totals(
    client: httpx.AsyncClient, caller: Caller, workspace: Workspace
) -> dict[str, Any]:
    response = await client.get(
        f"/api/v1/workspaces/{workspace.id}/reports",
        params={"preset": "today"},
        headers=caller.headers,
    )
    assert response.status_code == 200, response.text
    totals: dict[str, Any] = response.json()["totals"]
    return totals


async def test_a_cpc_model_gives_reports_cost_profit_roi_and_leaves_bots_out(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    sold = await visit(client, campaign, 1)
    await visit(client, campaign, 2)
    await click(client, db, workspace, campaign)  # httpx's user agent: a bot
    await postback(client, workspace, click_id=sold, txid="T1", payout="97,00")

    response = await client.put(
        f"{costs_url(campaign, workspace)}/model",
        json={"model": "cpc", "amount": "0,50"},
        headers=owner.headers,
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["current"] == {
        "model": "cpc",
        "starts_on": today(),
        "currency": "BRL",
        "amount": "0.50",
        "percent": None,
        "counts_bots": False,
        "event_types": [],
    }
    [row] = await fetch_all(db, cost_models, campaign_id=campaign.id)
    assert (row["model"], row["rate"]) == ("cpc", 500_000)
    totals = await todays_totals(client, owner, workspace)
    assert (totals["cost"], totals["profit"], totals["roi"], totals["roas"]) == (
        "1.00",
        "96.00",
        "96.0000",
        "97.0000",
    )
    assert (totals["cpc"], totals["cpa"]) == ("0.5000", "1.00")


async def test_a_model_change_applies_from_its_day_on_and_keeps_the_history(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await visit(client, campaign, 1)
    url = f"{costs_url(campaign, workspace)}/model"
    for body in (
        {"model": "cpc", "amount": "9", "starts_on": days_from_today(-1)},
        {"model": "cpc", "amount": "2", "starts_on": days_from_today(-1)},  # replaces it
        {"model": "cpa", "amount": "10", "starts_on": days_from_today(1), "event_types": ["SALE"]},
    ):
        response = await client.put(url, json=body, headers=owner.headers)
        assert response.status_code == 200, response.text

    body = (await client.get(url, headers=owner.headers)).json()
    assert [(v["model"], v["amount"], v["starts_on"]) for v in body["history"]] == [
        ("cpc", "2.00", days_from_today(-1)),
        ("cpa", "10.00", days_from_today(1)),
    ]
    assert body["current"]["model"] == "cpc"
    assert (await todays_totals(client, owner, workspace))["cost"] == "2.00"


async def test_a_day_entered_replaces_the_estimate_until_it_is_deleted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await visit(client, campaign, 1)
    url = costs_url(campaign, workspace)
    await client.put(f"{url}/model", json={"model": "cpc", "amount": "1"}, headers=owner.headers)

    entered = await client.put(
        f"{url}/days/{today()}", json={"cost": "1.234,56"}, headers=owner.headers
    )

    assert entered.status_code == 200, entered.text
    assert entered.json() == {
        "day": today(),
        "source_id": None,
        "currency": "BRL",
        "cost": "1234.56",
        "impressions": None,
    }
    assert (await todays_totals(client, owner, workspace))["cost"] == "1234.56"
    listed = (await client.get(f"{url}/days", headers=owner.headers)).json()
    assert [d["cost"] for d in listed["days"]] == ["1234.56"]

    deleted = await client.delete(f"{url}/days/{today()}", headers=owner.headers)

    assert deleted.status_code == 204
    assert (await todays_totals(client, owner, workspace))["cost"] == "1.00"
    again = await client.delete(f"{url}/days/{today()}", headers=owner.headers)
    assert again.status_code == 404


async def test_cpm_prices_impressions_entered_and_never_clicks(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    await visit(client, campaign, 1)
    url = costs_url(campaign, workspace)
    await client.put(
        f"{url}/model", json={"model": "cpm", "amount": "12,50"}, headers=owner.headers
    )
    assert (await todays_totals(client, owner, workspace))["cost"] == "0.00"

    await client.put(f"{url}/days/{today()}", json={"impressions": 2000}, headers=owner.headers)

    assert (await todays_totals(client, owner, workspace))["cost"] == "25.00"


async def test_revshare_takes_its_percent_of_approved_revenue(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    sold = await visit(client, campaign, 1)
    waiting = await visit(client, campaign, 2)
    await postback(client, workspace, click_id=sold, txid="T1", payout="97,00")
    await postback(client, workspace, click_id=waiting, txid="T2", payout="50", status="pending")

    response = await client.put(
        f"{costs_url(campaign, workspace)}/model",
        json={"model": "revshare", "percent": "30"},
        headers=owner.headers,
    )

    assert response.json()["current"]["percent"] == "30.00"
    totals = await todays_totals(client, owner, workspace)
    assert (totals["cost"], totals["profit"]) == ("29.10", "67.90")


async def test_a_cost_in_another_currency_or_a_bad_amount_is_refused_and_nothing_kept(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    url = costs_url(campaign, workspace)

    usd = await client.put(
        f"{url}/model",
        json={"model": "cpc", "amount": "1", "currency": "USD"},
        headers=owner.headers,
    )
    negative = await client.put(f"{url}/days/{today()}", json={"cost": "-5"}, headers=owner.headers)
    unknown_type = await client.put(
        f"{url}/model",
        json={"model": "cpa", "amount": "1", "event_types": ["NOPE"]},
        headers=owner.headers,
    )

    assert usd.status_code == 422
    assert (
        "cannot be converted to the workspace's currency (BRL)" in usd.json()["errors"]["currency"]
    )
    assert negative.status_code == 422
    assert "cost" in negative.json()["errors"]
    assert unknown_type.status_code == 422
    assert "NOPE" in unknown_type.json()["errors"]["event_types"]
    assert await fetch_all(db, cost_models) == []
    assert await fetch_all(db, cost_days) == []


async def test_a_csv_import_reports_every_bad_line_and_stores_nothing_then_all_of_a_good_one(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    source = await make_source(db, workspace, name="Meta")
    url = f"{costs_url(campaign, workspace)}/days/import"
    bad = (
        "day;cost;impressions;source\n2026-11-01;10,00;;\n31/02/2026;5;;\n"
        "2026-11-03;abc;;\n2026-11-04;1;;TikTok\n"
    )

    refused = await client.post(
        url, files={"file": ("costs.csv", bad.encode())}, headers=owner.headers
    )

    assert refused.status_code == 422
    assert set(refused.json()["errors"]) == {"line 3, day", "line 4, cost", "line 5, source"}
    assert await fetch_all(db, cost_days) == []

    good = '\ufeffday,cost,impressions,source\n2026-11-01,"1.234,56",,\n02/11/2026,,3000,Meta\n'
    imported = await client.post(
        url, files={"file": ("costs.csv", good.encode())}, headers=owner.headers
    )

    assert imported.status_code == 200, imported.text
    assert [
        (d["day"], d["cost"], d["impressions"], d["source_id"]) for d in imported.json()["days"]
    ] == [
        ("2026-11-02", None, 3000, source.id),
        ("2026-11-01", "1234.56", None, None),
    ]
    rows = await fetch_all(db, cost_days, campaign_id=campaign.id)
    assert sorted((str(r["day"]), r["cost"], r["source_id"]) for r in rows) == [
        ("2026-11-01", 1_234_560000, ""),
        ("2026-11-02", None, source.id),
    ]


async def test_an_import_refused_for_an_ambiguous_amount_leaves_what_was_stored(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    url = costs_url(campaign, workspace)
    entered = await client.put(
        f"{url}/days/2026-11-01", json={"cost": "50,00"}, headers=owner.headers
    )
    assert entered.status_code == 200, entered.text
    stored = await fetch_all(db, cost_days, campaign_id=campaign.id)

    refused = await client.post(
        f"{url}/days/import",
        files={"file": ("custos.csv", b"Dia;Custo\n01/11/2026;10\n02/11/2026;1.234\n")},
        headers=owner.headers,
    )

    assert refused.status_code == 422
    assert refused.json()["errors"] == {
        "line 3, Custo": "'1.234' is ambiguous: write 1234 if it is 1234, "
        "or 1.2340 if the '.' marks decimals"
    }
    assert await fetch_all(db, cost_days, campaign_id=campaign.id) == stored


async def stored_days(db: AsyncEngine, campaign: Campaign) -> int:
    """How many days of the campaign are stored, read without waiting for the write lock."""
    query = (
        select(func.count()).select_from(cost_days).where(cost_days.c.campaign_id == campaign.id)
    )
    async with reading(db).connect() as conn:
        return int((await conn.execute(query)).scalar_one())


async def test_a_click_is_answered_and_stored_while_a_large_import_is_being_stored(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    lines = 5000
    days = [date(2010, 1, 1) + timedelta(days=n) for n in range(lines)]
    data = "day;cost\n" + "".join(f"{day.isoformat()};12,50\n" for day in days)
    importing = asyncio.create_task(
        client.post(
            f"{costs_url(campaign, workspace)}/days/import",
            files={"file": ("costs.csv", data.encode())},
            headers=owner.headers,
        )
    )
    while not importing.done() and await stored_days(db, campaign) == 0:
        await asyncio.sleep(0.001)

    _, click_id = await click(client, db, workspace, campaign)
    stored_when_clicked = await stored_days(db, campaign)

    assert 0 < stored_when_clicked < lines  # the click came between the import's chunks
    assert await fetch_clicks(db, id=click_id) != []
    imported = await importing
    assert imported.status_code == 200, imported.text
    assert await stored_days(db, campaign) == lines


# A trigger of the database's own refuses one day: a failure only the database can cause, as a
# checked file's lines are otherwise all storable.
REFUSE_A_DAY = {
    "sqlite": [
        "CREATE TRIGGER refuse_a_day BEFORE INSERT ON cost_days WHEN NEW.day = '2010-09-01' "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END"
    ],
    "postgresql": [
        "CREATE FUNCTION refuse_a_day() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF NEW.day = DATE '2010-09-01' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$",
        "CREATE TRIGGER refuse_a_day BEFORE INSERT ON cost_days FOR EACH ROW "
        "EXECUTE FUNCTION refuse_a_day()",
    ],
}


async def test_an_import_stopped_by_the_database_says_how_much_was_stored_and_can_be_redone(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    days = [date(2010, 1, 1) + timedelta(days=n) for n in range(1000)]  # 2010-09-01 is 243rd
    data = "day;cost\n" + "".join(f"{day.isoformat()};12,50\n" for day in days)
    url = f"{costs_url(campaign, workspace)}/days/import"
    async with db.begin() as conn:
        for statement in REFUSE_A_DAY[db.dialect.name]:
            await conn.execute(text(statement))

    stopped = await client.post(
        url, files={"file": ("costs.csv", data.encode())}, headers=owner.headers
    )

    assert stopped.status_code == 503
    assert "the import stopped after 200 of 1000 lines were stored" in stopped.text
    assert await stored_days(db, campaign) == 200
    async with db.begin() as conn:
        await conn.execute(
            text(
                "DROP TRIGGER refuse_a_day ON cost_days"
                if db.dialect.name == "postgresql"
                else "DROP TRIGGER refuse_a_day"
            )
        )
    again = await client.post(
        url, files={"file": ("costs.csv", data.encode())}, headers=owner.headers
    )
    assert again.status_code == 200, again.text
    assert await stored_days(db, campaign) == 1000
