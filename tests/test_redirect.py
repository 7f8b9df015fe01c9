"""GET /r/{slug}: each click stored with its dimensions, then 302 to the offer, macros filled."""

from __future__ import annotations

import asyncio
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from sqlalchemy import Connection, select, text, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import (
    fetch_all,
    fetch_clicks,
    make_campaign,
    make_domain,
    make_source,
    make_workspace,
)
from trilha.app import TrilhaApp, create_app
from trilha.campaigns import CampaignStatus, ParamMapping, update_campaign
from trilha.clicks import ClickRequest, record_clicks
from trilha.db.engine import blocking_engine
from trilha.db.schema import campaigns, click_sub1_days, clicks, user_agents
from trilha.dimensions import DIMENSIONS
from trilha.ids import to_base62
from trilha.links import Link, resolve_link
from trilha.reports.rollups import ROLLUPS, rebuild_rollups
from trilha.settings import Settings
from trilha.visitors import Visitor, agent_key, parse_device
from trilha.web.tracking import LOCATION_SAFE, location_header

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
)


async def test_it_stores_the_click_and_redirects_with_macros_filled(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(
        db,
        workspace,
        name="Black Friday",
        slug="bf",
        offer_url="https://pay.example.com/checkout/abc?src={click_id}&sck={campaign_name}_{ad_id}",
    )

    response = await client.get(
        "/r/bf?utm_source=fb&ad_id=123&sub1=x&color=blue",
        headers={"user-agent": IPHONE, "referer": "https://m.facebook.com/"},
    )

    assert response.status_code == 302
    assert response.headers["cache-control"] == "no-store"
    [row] = await fetch_clicks(db)
    location = urlsplit(response.headers["location"])
    assert location.netloc == "pay.example.com"
    assert parse_qs(location.query) == {"src": [row["id"]], "sck": ["Black Friday_123"]}
    assert row["campaign_id"] == campaign.id
    assert row["workspace_id"] == workspace.id
    assert (row["utm_source"], row["ad_id"], row["sub1"]) == ("fb", "123", "x")
    assert row["params"] == {"color": "blue"}
    assert (row["device_type"], row["os"], row["is_bot"], row["is_unique"]) == (
        "mobile",
        "iOS",
        False,
        True,
    )
    assert row["ip"] == "198.51.100.23"
    assert row["referrer"] == "https://m.facebook.com/"
    assert row["user_agent"] == IPHONE


async def test_each_user_agent_is_stored_once_and_read_back_with_each_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    android = "Mozilla/5.0 (Linux; Android 14; SM-A546E) Chrome/126.0 Mobile Safari/537.36"

    for agent in (IPHONE, IPHONE, android, IPHONE):
        assert (await client.get("/r/lp", headers={"user-agent": agent})).status_code == 302

    agents = await fetch_all(db, user_agents)
    assert sorted((a["key"], a["agent"]) for a in agents) == sorted(
        [(agent_key(IPHONE), IPHONE), (agent_key(android), android)]
    )
    stored = await fetch_all(db, clicks)
    assert sorted(c["user_agent_key"] for c in stored) == sorted(
        [agent_key(IPHONE)] * 3 + [agent_key(android)]
    )
    read = await fetch_clicks(db)
    assert sorted(c["user_agent"] for c in read) == sorted([IPHONE] * 3 + [android])


async def test_it_answers_head_with_the_same_redirect_but_records_no_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://offer.example.com/?s={sub1}")

    response = await client.head("/r/lp?sub1=abc")

    assert response.status_code == 302
    assert response.headers["location"] == "https://offer.example.com/?s=abc"
    assert await fetch_clicks(db) == []


async def test_it_flags_bots_never_unique_and_still_redirects_them(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")

    for agent in ("facebookexternalhit/1.1", "Googlebot/2.1 (+http://www.google.com/bot.html)", ""):
        response = await client.get("/r/lp", headers={"user-agent": agent})
        assert response.status_code == 302

    rows = await fetch_clicks(db)
    # A unique click is a person's: the per-unique-click cost model charges for none of these.
    assert [(r["is_bot"], r["device_type"], r["is_unique"]) for r in rows] == [
        (True, "bot", False)
    ] * 3


async def test_it_counts_a_visitor_once_per_campaign_within_a_day(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="one")
    await make_campaign(db, workspace, slug="two")

    await client.get("/r/one", headers={"user-agent": IPHONE})
    await client.get("/r/one", headers={"user-agent": IPHONE})
    await client.get("/r/one", headers={"user-agent": "Mozilla/5.0 (Windows NT 10.0) Chrome/120"})
    await client.get("/r/two", headers={"user-agent": IPHONE})

    rows = sorted(await fetch_clicks(db), key=lambda r: r["id"])
    assert [r["is_unique"] for r in rows] == [True, False, True, True]


async def test_it_treats_a_visitor_as_new_after_24_hours(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    await client.get("/r/lp", headers={"user-agent": IPHONE})
    async with db.begin() as conn:
        await conn.execute(
            update(clicks).values(created_at=datetime.now(UTC) - timedelta(hours=25))
        )

    await client.get("/r/lp", headers={"user-agent": IPHONE})

    rows = sorted(await fetch_clicks(db), key=lambda r: r["created_at"])
    assert [r["is_unique"] for r in rows] == [True, True]


async def test_it_sends_unique_time_ordered_click_ids(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://o.example.com/?c={click_id}")

    responses = await asyncio.gather(*(client.get("/r/lp") for _ in range(50)))

    ids = [parse_qs(urlsplit(r.headers["location"]).query)["c"][0] for r in responses]
    assert len(set(ids)) == 50
    assert all(re.fullmatch(r"[0-9A-Za-z]{23}", click_id) for click_id in ids)
    stored = await fetch_clicks(db)
    assert {r["id"] for r in stored} == set(ids)
    for row in stored:  # the id starts with the click's millisecond, so ids sort by time
        assert row["id"][:9] == to_base62(int(row["created_at"].timestamp() * 1000), 9)


async def test_it_fills_fields_from_the_traffic_sources_own_parameter_names(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    source = await make_source(
        db,
        workspace,
        name="Facebook",
        params=(ParamMapping("fb_ad", "ad_id"), ParamMapping("pl", "placement")),
    )
    await make_campaign(
        db,
        workspace,
        slug="fb",
        source_id=source.id,
        offer_url="https://o.example.com/?ad={ad_id}&pl={placement}&src={source}",
    )

    response = await client.get("/r/fb?fb_ad=999&pl=feed&other=1")

    assert response.headers["location"] == "https://o.example.com/?ad=999&pl=feed&src=Facebook"
    [row] = await fetch_clicks(db)
    assert (row["ad_id"], row["placement"], row["source_id"]) == ("999", "feed", source.id)
    assert row["params"] == {"other": "1"}


async def test_it_routes_a_custom_domain_to_its_own_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    first = await make_workspace(db)
    second = await make_workspace(db)
    await make_domain(db, second, "track.second.example")
    await make_campaign(db, first, slug="same", offer_url="https://first.example.com/")
    await make_campaign(
        db,
        second,
        slug="same",
        host="track.second.example",
        offer_url="https://second.example.com/",
    )

    default = await client.get("/r/same")
    custom = await client.get("/r/same", headers={"host": "Track.Second.Example:443"})

    assert default.headers["location"] == "https://first.example.com/"
    assert custom.headers["location"] == "https://second.example.com/"
    rows = await fetch_clicks(db)
    assert sorted(r["workspace_id"] for r in rows) == sorted([first.id, second.id])


async def test_it_sends_unknown_slugs_to_the_domains_fallback_url(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db, fallback_url="https://home.example.com/")
    await make_domain(db, workspace, "go.example.net")
    other = await make_workspace(db)
    await make_domain(db, other, "go.example.org", fallback_url="https://org.example.com/")

    from_workspace = await client.get("/r/nope", headers={"host": "go.example.net"})
    from_domain = await client.get("/r/nope", headers={"host": "go.example.org"})
    on_default = await client.get("/r/nope")

    assert from_workspace.status_code == 302
    assert from_workspace.headers["location"] == "https://home.example.com/"
    assert from_domain.headers["location"] == "https://org.example.com/"
    assert on_default.status_code == 404
    assert "não existe" in on_default.text
    assert await fetch_clicks(db) == []


async def test_it_sends_a_paused_campaigns_visitors_to_its_fallback(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(
        db,
        workspace,
        slug="paused",
        status=CampaignStatus.PAUSED,
        fallback_url="https://other-offer.example.com/",
    )
    await make_campaign(db, workspace, slug="paused-bare", status=CampaignStatus.PAUSED)

    with_fallback = await client.get("/r/paused")
    without = await client.get("/r/paused-bare")

    assert with_fallback.status_code == 302
    assert with_fallback.headers["location"] == "https://other-offer.example.com/"
    assert without.status_code == 404
    assert await fetch_clicks(db) == []


async def test_it_applies_a_campaign_edit_to_the_very_next_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace, slug="lp", offer_url="https://old.example.com/")
    await client.get("/r/lp")
    async with db.begin() as conn:
        await update_campaign(
            conn,
            workspace,
            campaign.id,
            now=datetime.now(UTC),
            offer_url="https://new.example.com/",
        )

    response = await client.get("/r/lp")

    assert response.headers["location"] == "https://new.example.com/"


async def test_it_never_fills_a_macro_in_a_stored_offer_urls_host(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    async with db.begin() as conn:  # saved before such URLs were refused
        await conn.execute(
            update(campaigns)
            .where(campaigns.c.id == campaign.id)
            .values(offer_url="https://offer.example{sub1}/x?s={sub1}")
        )

    response = await client.get("/r/lp", params={"sub1": ".evil.test"})

    assert response.status_code == 302
    assert response.headers["location"] == "https://offer.example{sub1}/x?s=.evil.test"


@pytest.mark.parametrize(
    "path",
    [
        "/r/lp?%ff%fe=%c3%28&sub1=%e9t%e9",
        "/r/lp?&&==&a=1=2&;;&sub2",
        "/r/lp?" + "&".join(f"p{n}={n}" for n in range(500)),
        "/r/lp?sub1=" + "x" * 20000,
        "/r/lp?sub3=%00null%00",
    ],
)
async def test_it_survives_malformed_query_strings(
    client: httpx.AsyncClient, db: AsyncEngine, path: str
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://o.example.com/?s={sub1}")

    response = await client.get(path)

    assert response.status_code == 302
    [row] = await fetch_clicks(db)
    assert len(row["params"]) <= 64
    assert all("\x00" not in (row[f"sub{n}"] or "") for n in range(1, 11))
    assert len(row["sub1"] or "") <= 1024


async def test_it_survives_odd_headers(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")

    response = await client.get(
        "/r/lp",
        headers=[
            (b"user-agent", b"Mozilla/5.0 \xff\xfe (X11; Linux) " + b"A" * 10000),
            (b"referer", b"https://ex\xe9mple.com/\x00"),
            (b"x-forwarded-for", b"not-an-ip, 1.2.3.4"),
        ],
    )

    assert response.status_code == 302
    [row] = await fetch_clicks(db)
    assert row["ip"] == "198.51.100.23"  # the peer is not a trusted proxy
    assert len(row["user_agent"]) <= 4096
    assert "\x00" not in row["referrer"]


async def test_it_stores_tabs_newlines_backslashes_and_accents_exactly(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    # PostgreSQL receives click batches as COPY text, where these characters are syntax.
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    odd = "tab\there, line\nbreak\r\n, back\\slash \\N, \"quoted\" 'x', ação 🚀"

    response = await client.get(
        "/r/lp",
        params={"sub1": odd, "color": odd, odd: "key"},
        headers={"user-agent": "Agent\\with\\backslashes\tand tab", "referer": "\\N"},
    )

    assert response.status_code == 302
    [row] = await fetch_clicks(db)
    assert row["sub1"] == odd
    assert row["params"] == {"color": odd, odd: "key"}
    assert row["user_agent"] == "Agent\\with\\backslashes\tand tab"
    assert row["referrer"] == "\\N"


@pytest.mark.parametrize("path", ["/r/", "/r/a/b", "/r/-x", "/r/" + "a" * 65, "/r/..%2f"])
async def test_it_answers_404_for_paths_that_cannot_be_slugs(
    client: httpx.AsyncClient, db: AsyncEngine, path: str
) -> None:
    response = await client.get(path)

    assert response.status_code == 404
    assert await fetch_clicks(db) == []


async def test_it_refuses_other_methods(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")

    response = await client.post("/r/lp")

    assert response.status_code == 405
    assert await fetch_clicks(db) == []


async def test_it_answers_503_and_no_redirect_when_the_database_is_unreachable(
    tmp_path: Path,
) -> None:
    settings = Settings(database_url="postgresql+psycopg://nobody@127.0.0.1:1/none", _env_file=None)
    app = create_app(settings)
    app.runtime.start()
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            response = await http.get("/r/anything")
            head = await http.head("/r/anything")
    finally:
        await app.runtime.stop()

    assert response.status_code == 503
    assert "location" not in response.headers
    assert response.headers["retry-after"] == "5"
    assert head.status_code == 503


async def test_it_reconnects_after_losing_its_database_connection(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")
    assert (await client.get("/r/lp")).status_code == 302
    await _drop_writer_connection(app, db)

    answers = [(await client.get("/r/lp")).status_code for _ in range(3)]

    # The batch that finds the connection gone is not stored and says so; the next ones are.
    assert answers in ([503, 302, 302], [302, 302, 302])
    assert len(await fetch_clicks(db)) == 1 + answers.count(302)


async def _drop_writer_connection(app: TrilhaApp, db: AsyncEngine) -> None:
    """Cut the click writer's connection as a database restart would."""
    if db.dialect.name == "postgresql":
        async with db.connect() as conn:
            await conn.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            )
        return

    def close_driver_connection(conn: Connection) -> None:
        conn.connection.driver_connection.close()  # type: ignore[union-attr]

    with pytest.raises(SQLAlchemyError):  # its own commit finds the connection closed
        await app.runtime.writer.transaction(close_driver_connection)


@pytest.mark.parametrize(
    ("accept_language", "lang", "text"),
    [
        ("pt-BR,pt;q=0.9,en;q=0.8", "pt-BR", "Este link não existe ou não está mais ativo."),
        (None, "pt-BR", "Este link não existe ou não está mais ativo."),
        ("en-US,en;q=0.9", "en", "This link does not exist or is no longer active."),
    ],
)
async def test_a_visitor_reads_why_no_offer_follows_in_their_language(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    accept_language: str | None,
    lang: str,
    text: str,
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="paused", status=CampaignStatus.PAUSED)
    headers = {"accept-language": accept_language} if accept_language else {}

    answers = [await client.get(path, headers=headers) for path in ("/r/paused", "/r/nope", "/r/!")]

    for answer in answers:
        assert answer.status_code == 404
        assert f"<html lang={lang}>" in answer.text
        assert text in answer.text


async def test_a_batch_of_clicks_filling_different_columns_stores_each_as_sent(
    db: AsyncEngine,
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace, slug="mix")
    sent: list[dict[str, str]] = [
        {"sub1": "a", "utm_source": "fb"},
        {"utm_source": "fb", "sub1": "a"},  # the same columns, named in another order
        {"sub2": "b", "color": "blue"},
        {},
        {"sub1": "a", "utm_source": "fb"},
        {"cost": "0.25", "sub1": "c", "fbclid": "x1"},
    ]
    start = datetime.now(UTC) - timedelta(days=1)
    writer = blocking_engine(db)
    with writer.connect() as conn, conn.begin():
        link = resolve_link(conn, host="testserver", slug=campaign.slug)
        assert isinstance(link, Link)
        visitor = Visitor("198.51.100.7", IPHONE, "", parse_device(IPHONE), "BR")
        batch = [
            (
                link,
                ClickRequest(
                    "testserver", campaign.slug, visitor, params, start + timedelta(hours=n)
                ),
            )
            for n, params in enumerate(sent)
        ]
        rows = record_clicks(conn, batch)
    writer.dispose()

    stored = {click["id"]: click for click in await fetch_clicks(db)}
    assert len(stored) == len(sent)
    for params, row in zip(sent, rows, strict=True):
        click = stored[row["id"]]
        assert {name: click[name] for name in DIMENSIONS if click[name] is not None} == {
            name: value for name, value in params.items() if name in DIMENSIONS
        }
        assert click["params"] == {k: v for k, v in params.items() if k not in DIMENSIONS}
        assert (click["cost"] is not None) == ("cost" in params)
        assert click["created_at"] == row["created_at"]
        assert click["is_unique"] == (params is sent[0])  # the visitor's later clicks are not
    # The batch's sums are those counted again from the stored clicks.
    counted = await rollup_rows(db)
    async with db.begin() as rebuilding:
        await rebuilding.run_sync(rebuild_rollups)
    assert await rollup_rows(db) == counted
    assert sum(row[-3] for row in counted[click_sub1_days.name]) == len(sent)


async def rollup_rows(db: AsyncEngine) -> dict[str, list[tuple[Any, ...]]]:
    async with db.connect() as conn:
        return {
            rollup.table.name: sorted(
                tuple(row) for row in await conn.execute(select(rollup.table))
            )
            for rollup in ROLLUPS
        }


def test_the_location_header_is_the_offer_url_quoted_as_before() -> None:
    # Every character alone, then random URLs mixing the ones left as they are with the others.
    alphabet = [chr(code) for code in range(0x250)] + ["🚀", "\u2028"]
    texts = [*alphabet, *("".join(random.choices(alphabet, k=40)) for _ in range(20_000))]
    texts += ["https://offer.example.com/checkout?cid=00Vd7srhrqnxZNI6TNm4VyK&src=fb&s1=a%20b"]
    for text_ in texts:
        assert location_header(text_) == quote(text_, safe=LOCATION_SAFE).encode("ascii")
