"""GET /api/v1/workspaces/{id}/reports: what the clicks and postbacks add up to, by level."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from tests.web.callers import make_member, make_owner
from tests.web.sales import click, create_merchant, postback
from trilha.campaigns import Campaign
from trilha.workspaces import Role

IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.{n}"
)


def reports_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/reports"


async def visit(client: httpx.AsyncClient, campaign: Campaign, visitor: int) -> str:
    """A click by a person (visitor n's phone), and the click id its offer URL received."""
    response = await client.get(
        f"/r/{campaign.slug}", headers={"user-agent": IPHONE.format(n=visitor)}
    )
    assert response.status_code == 302
    [click_id] = parse_qs(urlsplit(response.headers["location"]).query)["src"]
    return click_id


async def test_it_adds_up_clicks_sales_pending_and_refunds_by_campaign(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    black_friday = await make_campaign(db, workspace, name="Black Friday")
    other = await make_campaign(db, workspace, name="Other")
    sold = await visit(client, black_friday, 1)
    pending = await visit(client, black_friday, 2)
    refunded = await visit(client, black_friday, 2)
    await click(client, db, workspace, other)  # a bot: httpx's user agent
    await postback(client, workspace, click_id=sold, txid="T1", payout="97,00")
    await postback(client, workspace, click_id=pending, txid="T2", payout="50", status="pending")
    await postback(client, workspace, click_id=refunded, txid="T3", payout="30")
    await postback(client, workspace, click_id=refunded, txid="T3", status="refunded")
    await postback(client, workspace, click_id=sold, txid="L1", event="lead")

    response = await client.get(
        reports_url(workspace.id),
        params={"preset": "today", "group_by": "campaign", "sort": "clicks"},
        headers=owner.headers,
    )

    assert response.status_code == 200, response.text
    report = response.json()
    assert report["currency"] == "BRL"
    assert report["period"]["timezone"] == "America/Sao_Paulo"
    first, second = report["rows"]
    assert (first["key"], first["labels"]) == ([black_friday.id], ["Black Friday"])
    assert second["labels"] == ["Other"]
    m = first["metrics"]
    assert (m["clicks"], m["unique_clicks"], m["bot_clicks"]) == (3, 2, 0)
    assert (m["sales"], m["pending_sales"], m["refunds"], m["leads"]) == (2, 1, 1, 1)
    assert (m["approved_revenue"], m["refunded"], m["net_revenue"]) == ("127.00", "30.00", "97.00")
    assert (m["pending_revenue"], m["cr"], m["epc"], m["aov"]) == (
        "50.00",
        "0.6667",
        "32.33",
        "63.50",
    )
    assert (second["metrics"]["clicks"], second["metrics"]["bot_clicks"]) == (1, 1)
    assert second["metrics"]["cr"] is None  # no clicks but bots: no rate
    assert report["totals"]["clicks"] == 4
    assert report["totals"]["net_revenue"] == "97.00"


async def test_it_drills_down_campaign_source_and_sub1_a_level_at_a_time(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="bf")
    other = await make_campaign(db, workspace, slug="other")
    for sub1 in ("a", "a", "b", ""):
        assert (await client.get(f"/r/bf?sub1={sub1}")).status_code == 302
    assert (await client.get(f"/r/{other.slug}?sub1=z")).status_code == 302

    async def level(*parent: str) -> dict[str, object]:
        response = await client.get(
            reports_url(workspace.id),
            params={
                "preset": "last_7_days",
                "group_by": ["campaign", "source", "sub1"],
                "parent": list(parent),
            },
            headers=owner.headers,
        )
        assert response.status_code == 200, response.text
        answer: dict[str, object] = response.json()
        return answer

    campaigns, sources, subs = (
        await level(),
        await level(campaign.id),
        await level(campaign.id, ""),
    )

    def rows(answer: dict[str, object]) -> dict[tuple[str, ...], int]:
        found = answer["rows"]
        assert isinstance(found, list)
        return {tuple(r["key"]): r["metrics"]["clicks"] for r in found}

    assert rows(campaigns) == {(campaign.id,): 4, (other.id,): 1}
    assert [r["key"] for r in campaigns["rows"]] == [[campaign.id], [other.id]]  # type: ignore[attr-defined]
    assert (campaigns["level"], campaigns["row_count"], campaigns["others"]) == (
        "campaign",
        2,
        None,
    )
    assert rows(sources) == {(campaign.id, ""): 4}
    assert rows(subs) == {
        (campaign.id, "", "a"): 2,
        (campaign.id, "", ""): 1,
        (campaign.id, "", "b"): 1,
    }
    assert subs["totals"]["clicks"] == 4  # type: ignore[index]
    assert subs["rows"][0]["labels"] == [campaign.name, "", "a"]  # type: ignore[index]


async def test_it_groups_by_local_day_and_by_dimensions_outside_the_rollups(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="bf")
    for country in ("BR", "BR", "PT"):
        assert (await client.get(f"/r/bf?utm_source={country}")).status_code == 302

    response = await client.get(
        reports_url(workspace.id),
        params={"preset": "today", "group_by": ["day", "utm_source"], "timezone": "Asia/Kolkata"},
        headers=owner.headers,
    )

    assert response.status_code == 200, response.text
    report = response.json()
    [today] = [row["key"][0] for row in report["rows"]]
    assert today == report["period"]["first"]
    opened = await client.get(
        reports_url(workspace.id),
        params={
            "preset": "today",
            "group_by": ["day", "utm_source"],
            "timezone": "Asia/Kolkata",
            "parent": today,
        },
        headers=owner.headers,
    )
    assert opened.status_code == 200, opened.text
    rows = opened.json()["rows"]
    assert {row["key"][1]: row["metrics"]["clicks"] for row in rows} == {"BR": 2, "PT": 1}
    assert {row["key"][0] for row in rows} == {today}


async def test_it_exports_csv_for_excel_in_portuguese(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign, click_id = await click(client, db, workspace)
    await postback(client, workspace, click_id=click_id, txid="T1", payout="1.234,56")

    response = await client.get(
        f"{reports_url(workspace.id)}/csv",
        params={"preset": "today", "column": ["clicks", "net_revenue"]},
        headers=owner.headers,
    )

    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    assert response.content.startswith("\ufeff".encode())
    assert response.content.decode("utf-8-sig").splitlines() == [
        "campaign;clicks;net_revenue",
        f"{campaign.name};1;1234,56",
        "total;1;1234,56",
    ]


async def test_it_refuses_bad_levels_filters_and_periods_with_422(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    url = reports_url(workspace.id)
    for params in (
        {"group_by": ["day", "campaign", "source", "sub1"]},
        {"group_by": ["nope"]},
        {"filter": "nope:1"},
        {"filter": "day:2026-01-01"},
        {"preset": "custom"},
        {"preset": "custom", "first": "2026-02-01", "last": "2026-01-01"},
        {"timezone": "Mars/Olympus"},
        {"sort": "nope"},
    ):
        response = await client.get(url, params=params, headers=owner.headers)
        assert response.status_code == 422, (params, response.text)


@pytest.mark.parametrize(
    ("first", "last", "timezone"),
    [
        ("9999-12-31", "9999-12-31", "UTC"),  # its end, 10000-01-01, does not exist
        ("9999-01-01", "9999-12-31", "America/Sao_Paulo"),
        ("0001-01-01", "0001-01-01", "Asia/Tokyo"),  # began in year 0, in UTC
    ],
)
async def test_it_refuses_a_period_past_the_calendar_with_422(
    client: httpx.AsyncClient, db: AsyncEngine, first: str, last: str, timezone: str
) -> None:
    owner, workspace = await make_owner(db)
    params = {"preset": "custom", "first": first, "last": last, "timezone": timezone}

    for path in ("", "/csv"):
        response = await client.get(
            f"{reports_url(workspace.id)}{path}", params=params, headers=owner.headers
        )

        assert response.status_code == 422, response.text
        assert response.json()["errors"] == {
            "period": "must fall between the years 1 and 9999 in its time zone"
        }


async def test_it_reports_the_calendars_last_and_first_whole_days(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    for first, last, timezone in (
        ("9999-12-30", "9999-12-30", "Asia/Tokyo"),
        ("0001-01-01", "0001-01-01", "America/Sao_Paulo"),
    ):
        response = await client.get(
            reports_url(workspace.id),
            params={"preset": "custom", "first": first, "last": last, "timezone": timezone},
            headers=owner.headers,
        )

        assert response.status_code == 200, response.text
        assert response.json()["totals"]["clicks"] == 0


async def test_a_test_postback_never_counts(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, name="Launch")
    sold = await visit(client, campaign, 1)
    merchant = await create_merchant(client, owner, workspace, key="hotmart", preset="hotmart")
    trial = await client.post(
        f"/api/v1/workspaces/{workspace.id}/merchants/{merchant['id']}/test",
        json={"event_type": "SALE", "status": "approved", "value": "97.00", "click_id": sold},
        headers=owner.headers,
    )
    assert trial.json()["outcome"] == "created", trial.text
    await postback(client, workspace, click_id=sold, txid="REAL", payout="47")

    response = await client.get(
        reports_url(workspace.id), params={"preset": "today"}, headers=owner.headers
    )

    totals = response.json()["totals"]
    assert (totals["sales"], totals["approved_revenue"]) == (1, "47.00")


async def test_each_member_chooses_the_report_columns_and_the_csv_follows(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    url = f"{reports_url(workspace.id)}/columns"

    default = (await client.get(url, headers=owner.headers)).json()
    assert default["columns"][:3] == ["clicks", "unique_clicks", "sales"]
    assert set(default["columns"]) < set(default["available"])

    chosen = await client.put(
        url, json={"columns": ["net_revenue", "clicks", "net_revenue"]}, headers=viewer.headers
    )
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["columns"] == ["net_revenue", "clicks"]
    assert (await client.get(url, headers=viewer.headers)).json()["columns"] == [
        "net_revenue",
        "clicks",
    ]
    assert (await client.get(url, headers=owner.headers)).json() == default  # the viewer's own

    refused = await client.put(url, json={"columns": ["clicks", "vibes"]}, headers=owner.headers)
    assert refused.status_code == 422
    assert "vibes" in refused.json()["errors"]["columns"]
    empty = await client.put(url, json={"columns": []}, headers=owner.headers)
    assert empty.status_code == 422
    assert (await client.get(url, headers=owner.headers)).json() == default
