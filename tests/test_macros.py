"""The macro language: every built-in macro, single-pass filling, per-part URL encoding."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign, make_source, make_workspace
from trilha.clicks import (
    SAMPLE_VISITOR,
    ClickRequest,
    build_click,
    macro_values,
    offer_url,
    preview_offer_url,
)
from trilha.dimensions import CLICK_IDS, SUBS, UTMS
from trilha.links import Link
from trilha.macros import BUILTIN_MACROS, compile_template, fill_macros, unknown_macros

ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/120.0.0.0 Mobile Safari/537.36"
)
SENT = {
    "creative": "video-3",
    "ad_id": "120200",
    "ad_name": "Ad Name",
    "adset_id": "555",
    "adset_name": "Lookalike 1%",
    "placement": "Instagram_Reels",
    "site_id": "site9",
    "keyword": "curso online",
    **{name: f"s{n}" for n, name in enumerate(SUBS, 1)},
    **{name: f"{name}-v" for name in UTMS},
    **{name: f"{name}-123" for name in CLICK_IDS},
}


async def test_it_fills_every_built_in_macro(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db, timezone="America/Sao_Paulo")
    source = await make_source(db, workspace, name="Meta Ads")
    campaign = await make_campaign(
        db,
        workspace,
        name="Curso X",
        slug="curso-x",
        source_id=source.id,
        offer_url="https://pay.example.com/c?"
        + "&".join(f"{name}={{{name}}}" for name in BUILTIN_MACROS),
    )

    response = await client.get(
        "/r/curso-x",
        params=SENT,
        headers={"user-agent": ANDROID, "referer": "https://l.instagram.com/"},
    )

    assert response.status_code == 302
    filled = {k: v[0] for k, v in parse_qs(urlsplit(response.headers["location"]).query).items()}
    [row] = await fetch_clicks(db)
    created: datetime = row["created_at"]
    expected = {
        **SENT,
        "click_id": row["id"],
        "campaign_id": campaign.id,
        "campaign_name": "Curso X",
        "campaign_slug": "curso-x",
        "source": "Meta Ads",
        "source_id": source.id,
        "device": "mobile",
        "os": "Android",
        "browser": "Chrome Mobile",
        "ip": "198.51.100.23",
        "user_agent": ANDROID,
        "referrer": "https://l.instagram.com/",
        "timestamp": str(int(created.timestamp())),
        "date": created.astimezone(ZoneInfo("America/Sao_Paulo")).date().isoformat(),
    }
    assert {k: filled.get(k) for k in expected} == expected
    assert set(filled) == set(BUILTIN_MACROS) - {"country"}  # 198.51.100.0/24 has no country
    assert filled["random"].isdigit()
    assert "{" not in response.headers["location"]


async def test_it_fills_any_query_parameter_by_name_but_never_overrides_built_ins(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(
        db,
        workspace,
        slug="lp",
        offer_url="https://o.example.com/?cor={color}&cid={click_id}&x={missing}",
    )

    response = await client.get("/r/lp?color=azul&click_id=forged")

    [row] = await fetch_clicks(db)
    assert response.headers["location"] == (
        f"https://o.example.com/?cor=azul&cid={row['id']}&x={{missing}}"
    )


def test_it_leaves_unknown_macros_exactly_as_written() -> None:
    template = "https://o.example.com/{Click_ID}/?a={clickid}&b={ click_id }&c={{x}}&d={}"

    assert fill_macros(template, {"click_id": "1", "x": "2"}) == (
        "https://o.example.com/{Click_ID}/?a={clickid}&b={ click_id }&c={2}&d={}"
    )


def test_it_never_expands_a_value_twice() -> None:
    assert fill_macros("https://o.example.com/?a={a}&b={b}", {"a": "{b}", "b": "x"}) == (
        "https://o.example.com/?a=%7Bb%7D&b=x"
    )


def test_it_encodes_each_value_for_the_part_of_the_url_it_lands_in() -> None:
    values = {"v": "a b/c?d&e=f#g+h%ç"}
    filled = fill_macros("https://o.example.com/p/{v}/?q={v}#frag={v}", values)

    path, query, fragment = (
        "a%20b%2Fc%3Fd&e=f%23g+h%25%C3%A7",
        "a%20b/c?d%26e%3Df%23g%2Bh%25%C3%A7",
        ("a%20b/c?d&e=f%23g+h%25%C3%A7"),
    )
    assert filled == f"https://o.example.com/p/{path}/?q={query}#frag={fragment}"
    assert parse_qs(urlsplit(filled).query)["q"] == [values["v"]]


def test_it_lists_the_macros_nothing_would_fill() -> None:
    assert unknown_macros(
        "https://o.example.com/?a={click_id}&b={colr}&c={color}&d={colr}", {"color": "x"}
    ) == ("colr",)


def test_the_preview_shows_the_final_url_and_flags_unknown_macros() -> None:
    preview = preview_offer_url(
        "https://pay.example.com/c?src={click_id}&sck={campaign_name}_{ad_id}&t={typo}",
        {"ad_id": "77"},
        campaign_name="Black Friday",
        now=datetime(2026, 11, 27, 12, tzinfo=UTC),
    )

    query = parse_qs(urlsplit(preview.url).query)
    assert len(query["src"][0]) == 23
    assert query["sck"] == ["Black Friday_77"]
    assert preview.url.endswith("&t={typo}")
    assert preview.unknown_macros == ("typo",)


def test_there_are_at_least_33_documented_built_in_macros() -> None:
    assert len(BUILTIN_MACROS) >= 33
    assert all(description.strip() for description in BUILTIN_MACROS.values())


def test_a_click_fills_its_offer_url_as_the_macro_language_fills_a_template() -> None:
    # The redirect fills a campaign's offer URL from steps prepared once per template: the URL
    # must be what fill_macros makes of the same template and values, for every macro.
    rng = random.Random(29)
    names = [*BUILTIN_MACROS, "color", "Click_ID", "missing"]
    values = ["x", "a b/c?d&e=f#g+h%ç", "{click_id}", "", "IwAR0x"]
    now = datetime(2026, 11, 27, 12, tzinfo=UTC)
    for _ in range(300):
        parts = ["https://o.example.com/"]
        for _ in range(rng.randrange(1, 6)):
            parts.append(rng.choice(["p/", "?q=", "&r=", "#f=", "-", ""]))
            parts.append("{" + rng.choice(names) + "}")
        template = "".join(parts)
        params = {name: rng.choice(values) for name in rng.sample(names, 8)}
        link = Link(
            campaign_id="c1",
            workspace_id="w1",
            name=rng.choice(values),
            slug="s",
            offer_url=template,
            source_id=rng.choice([None, "src1"]),
            source_name=rng.choice(values),
            source_params=(),
            timezone="America/Sao_Paulo",
        )
        request = ClickRequest(host="", slug="s", visitor=SAMPLE_VISITOR, params=params, now=now)
        click = build_click(link, request, click_id="k1", visitor_key=1, is_unique=True)
        compiled = compile_template(template)
        filled = fill_macros(template, macro_values(link, click, params, compiled.names))
        # "random" differs from one call to the next: compared by where it stands.
        ours, theirs = offer_url(link, click, params), filled
        if "{random}" in template:
            ours, theirs = _without_numbers(ours), _without_numbers(theirs)
        assert ours == theirs, template


def _without_numbers(url: str) -> str:
    return re.sub(r"\d+", "0", url)
