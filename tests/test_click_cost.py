"""GET /r/{slug}?cost=: what the click cost, stored with it when it reads as one, ignored (and
the visitor redirected all the same) when it does not, and summed by the click_url model."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign, make_workspace
from tests.web.callers import make_owner


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("0.05", 50_000),
        ("0,05", 50_000),
        ("12", 12_000_000),
        ("0.0000125", 13),  # a cost unit is a millionth of a real: rounded half up
        ("1000", 1_000_000_000),
        ("1000.01", None),  # more than a click can sanely cost
        ("-0.05", None),
        ("{cost}", None),  # the traffic source did not fill its macro
        ("1e3", None),
        ("", None),
    ],
)
async def test_it_stores_the_url_s_cost_when_it_reads_as_one_and_always_redirects(
    client: httpx.AsyncClient, db: AsyncEngine, given: str, stored: int | None
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace)

    response = await client.get(f"/r/{campaign.slug}", params={"cost": given})

    assert response.status_code == 302
    [row] = await fetch_clicks(db, campaign_id=campaign.id)
    assert row["cost"] == stored
    assert row["params"]["cost"] == given


async def test_the_click_url_model_sums_what_the_clicks_said_they_cost(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace)
    other = await make_campaign(db, workspace)
    for cost in ("0.05", "0,10", "oops"):
        await client.get(f"/r/{campaign.slug}", params={"cost": cost})
    await client.get(f"/r/{other.slug}", params={"cost": "7"})  # its model is not click_url
    url = f"/api/v1/workspaces/{workspace.id}/campaigns/{campaign.id}/costs/model"
    await client.put(url, json={"model": "click_url"}, headers=owner.headers)

    response = await client.get(
        f"/api/v1/workspaces/{workspace.id}/reports",
        params={"preset": "today", "group_by": "campaign"},
        headers=owner.headers,
    )

    assert response.status_code == 200, response.text
    costs = {row["key"][0]: row["metrics"]["cost"] for row in response.json()["rows"]}
    assert costs == {campaign.id: "0.15", other.id: "0.00"}
