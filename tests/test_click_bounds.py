"""Clicks whose values do not fit their columns, or whose row fails: each costs only itself."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.apps import running_client
from tests.factories import fetch_clicks, make_campaign, make_workspace
from tests.logcapture import trilha_lines
from tests.refusals import refuse_inserts
from trilha.clicks import CUT_NOTE, MAX_VALUE_LENGTH
from trilha.db.bounds import max_lengths
from trilha.db.schema import clicks
from trilha.settings import Settings
from trilha.web.asgi import MAX_HEADER_VALUE

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
)
# The parser takes the browser's name from the product token and the OS's from "Darwin".
HOSTILE = "A" * 150 + "/1.0 CFNetwork/1.0 Darwin/20.0"
LEGITIMATE = 30


async def _visit(client: httpx.AsyncClient, path: str, agent: str) -> httpx.Response:
    return await client.get(path, headers={"user-agent": agent})


async def test_hostile_user_agents_cost_no_visitor_their_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    agents = [f"{IPHONE} v{n}" for n in range(LEGITIMATE)]
    for position in (3, 11, 19, 27):
        agents.insert(position, HOSTILE)

    answers = await asyncio.gather(
        *(_visit(client, f"/r/lp?sub1=v{n}", a) for n, a in enumerate(agents))
    )

    assert [a.status_code for a in answers] == [302] * len(agents)
    rows = await fetch_clicks(db)
    assert sorted(r["sub1"] for r in rows) == sorted(f"v{n}" for n in range(len(agents)))
    hostile = [r for r in rows if r["user_agent"] == HOSTILE]
    assert len(hostile) == 4
    assert {r["browser"] for r in hostile} == {"A" * max_lengths(clicks)["browser"]}
    assert all(len(r["os"]) <= max_lengths(clicks)["os"] for r in rows)


async def test_over_long_parameters_and_referrer_are_stored_cut_with_a_note(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    long_name = "n" * 100

    response = await client.get(
        "/r/lp",
        params={
            "sub1": "s" * 5000,
            "utm_campaign": "u" * 2000,
            "sub2": "short",
            long_name: "x",
            "color": "c" * 1500,
        },
        headers={"user-agent": IPHONE, "referer": "https://r.example.com/" + "r" * 9000},
    )

    assert response.status_code == 302
    [row] = await fetch_clicks(db)
    assert row["sub1"] == "s" * MAX_VALUE_LENGTH
    assert row["utm_campaign"] == "u" * MAX_VALUE_LENGTH
    assert row["sub2"] == "short"
    assert len(row["referrer"]) == MAX_HEADER_VALUE
    assert row["params"]["color"] == "c" * MAX_VALUE_LENGTH
    assert sorted(row["params"][CUT_NOTE]) == sorted(
        ["sub1", "utm_campaign", "n" * 64, "color", "referrer"]
    )


async def test_a_click_with_nothing_cut_carries_no_note(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")

    await client.get("/r/lp?sub1=" + "s" * MAX_VALUE_LENGTH + "&color=blue")

    [row] = await fetch_clicks(db)
    assert len(row["sub1"]) == MAX_VALUE_LENGTH
    assert row["params"] == {"color": "blue"}


async def test_a_click_the_database_refuses_costs_only_itself(
    client: httpx.AsyncClient, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    await refuse_inserts(db, "clicks", when="NEW.sub1 = 'poison'")
    subs = [f"v{n}" for n in range(LEGITIMATE)]
    subs.insert(7, "poison")
    subs.insert(21, "poison")

    with trilha_lines(caplog, logging.WARNING):
        answers = await asyncio.gather(
            *(_visit(client, f"/r/lp?sub1={sub}", IPHONE) for sub in subs)
        )

    assert [a.status_code for s, a in zip(subs, answers, strict=True) if s == "poison"] == [503] * 2
    by_sub = {s: a for s, a in zip(subs, answers, strict=True) if s != "poison"}
    assert [a.status_code for a in by_sub.values()] == [302] * LEGITIMATE
    rows = await fetch_clicks(db)
    # Each answered click stored once, under the id its redirect carries.
    assert sorted(r["sub1"] for r in rows) == sorted(by_sub)
    stored = {r["sub1"]: r["id"] for r in rows}
    for sub, answer in by_sub.items():
        assert answer.headers["location"].endswith(f"src={stored[sub]}")
    assert "click not stored" in caplog.text


def test_every_bounded_click_column_is_bounded_or_filled_by_trilha() -> None:
    # ids trilha mints or reads from its own rows; the visitor's values are bounded (the visitor
    # key is an integer).
    own = {"id", "campaign_id", "source_id"}
    bounded_from_visitor = {"ip", "device_type", "os", "browser", "country"}
    assert set(max_lengths(clicks)) == own | bounded_from_visitor


async def test_a_click_from_an_over_long_forwarded_address_is_stored_bounded(
    database_url: str, db: AsyncEngine
) -> None:
    settings = Settings(
        database_url=database_url,
        public_url="http://testserver",
        trusted_proxies="198.51.100.0/24",
        _env_file=None,
    )
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    forwarded = "fe80::1%" + "z" * 80  # an IPv6 address with a zone: any length

    async with running_client(settings) as client:
        response = await client.get("/r/lp", headers={"x-forwarded-for": forwarded})

    assert response.status_code == 302
    [row] = await fetch_clicks(db)
    assert row["ip"] == forwarded[: max_lengths(clicks)["ip"]]
