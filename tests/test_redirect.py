"""GET /r/{slug}: each click stored with its dimensions, then 302 to the offer, macros filled."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign, make_workspace
from trilha.db.schema import clicks

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
    [row] = await fetch_all(db, clicks)
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
