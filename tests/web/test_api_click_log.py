"""The click log over the API: each click with what it converted to, the log's filters (days on
the workspace's clock, sub-ids, country, device, bots, converted), keyset pages, and one click
with its conversions' status histories."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign, make_source, move_click
from tests.web.callers import make_owner
from tests.web.sales import postback

BOT = "curl/8.5.0"
PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148"


def log_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/clicks"


async def visit(client: httpx.AsyncClient, path: str, user_agent: str = PHONE) -> str:
    """Click a tracking link; the click id the offer received (campaigns here send ``src``)."""
    response = await client.get(path, headers={"user-agent": user_agent})
    assert response.status_code == 302
    return httpx.URL(response.headers["location"]).params["src"]


async def test_it_shows_what_each_click_converted_to(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="lp")
    sold = await visit(client, "/r/lp")
    await visit(client, "/r/lp")
    await postback(client, workspace, click_id=sold, txid="T-1", payout="197,00")
    refund = await postback(
        client, workspace, click_id=sold, txid="T-1", payout="197,00", status="refunded"
    )
    assert refund["status"] == "status_changed"

    page = (await client.get(log_url(workspace.id), headers=owner.headers)).json()

    by_id = {c["id"]: c for c in page["clicks"]}
    assert len(by_id) == 2
    [conversion] = by_id[sold]["conversions"]
    assert (conversion["event_type"], conversion["status"]) == ("SALE", "refunded")
    assert (conversion["value"], conversion["currency"], conversion["txid"]) == (
        "197.00",
        "BRL",
        "T-1",
    )
    [other] = set(by_id) - {sold}
    assert by_id[other]["conversions"] == []


async def test_it_filters_converted_bot_device_country_source_and_sub_ids(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    source = await make_source(db, workspace)
    await make_campaign(db, workspace, slug="fb", source_id=source.id)
    await make_campaign(db, workspace, slug="plain")
    sold = await visit(client, "/r/fb?sub1=ad-7&sub2=x")
    bot = await visit(client, "/r/plain?sub1=ad-7", user_agent=BOT)
    other = await visit(client, "/r/plain?sub1=ad-8")
    await postback(client, workspace, click_id=sold, txid="T-2", payout="10")

    async def ids(**params: str | list[str]) -> set[str]:
        response = await client.get(log_url(workspace.id), params=params, headers=owner.headers)
        assert response.status_code == 200, response.text
        return {c["id"] for c in response.json()["clicks"]}

    assert await ids(converted="true") == {sold}
    assert await ids(converted="false") == {bot, other}
    assert await ids(is_bot="true") == {bot}
    assert await ids(is_bot="false") == {sold, other}
    assert await ids(device_type="mobile") == {sold, other}
    assert await ids(sub="sub1:ad-7") == {sold, bot}
    assert await ids(sub=["sub1:ad-7", "sub2:x"]) == {sold}
    assert await ids(source_id=source.id) == {sold}
    assert await ids(country="ZZ") == set()


async def test_it_reads_days_on_the_workspaces_clock(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db, timezone="America/Sao_Paulo")
    await make_campaign(db, workspace, slug="lp")
    # 01:30 UTC on 2 May is still 1 May in São Paulo (-03:00); 03:30 UTC is 2 May there.
    late = await move_click(
        db, await visit(client, "/r/lp"), datetime(2024, 5, 2, 1, 30, tzinfo=UTC)
    )
    early = await move_click(
        db, await visit(client, "/r/lp"), datetime(2024, 5, 2, 3, 30, tzinfo=UTC)
    )

    async def ids(**params: str) -> list[str]:
        response = await client.get(log_url(workspace.id), params=params, headers=owner.headers)
        return [c["id"] for c in response.json()["clicks"]]

    assert await ids(from_day="2024-05-01", to_day="2024-05-01") == [late]
    assert await ids(from_day="2024-05-02") == [early]
    assert await ids(to_day="2024-05-02") == [early, late]


async def test_it_pages_by_keyset_in_time_order(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="lp")
    made = [await visit(client, "/r/lp") for _ in range(5)]
    # Two clicks of an earlier millisecond: the rest of the id breaks the tie.
    same = datetime(2024, 5, 1, 12, tzinfo=UTC)
    made[1:3] = sorted([await move_click(db, click_id, same) for click_id in made[1:3]])

    seen: list[str] = []
    params: dict[str, str | int] = {"limit": 2}
    while True:
        response = await client.get(log_url(workspace.id), params=params, headers=owner.headers)
        page = response.json()
        seen += [c["id"] for c in page["clicks"]]
        if page["next_before"] is None:
            break
        params["before"] = page["next_before"]

    assert seen == [made[4], made[3], made[0], made[2], made[1]]


async def test_it_refuses_a_sub_filter_that_names_no_sub_id(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.get(
        log_url(workspace.id), params={"sub": "utm_source:fb"}, headers=owner.headers
    )

    assert response.status_code == 422
    assert "sub1..sub10" in response.json()["errors"]["sub"]


async def test_it_shows_a_click_with_its_parameters_and_status_history(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await make_campaign(db, workspace, slug="lp")
    click_id = await visit(client, "/r/lp?sub3=abc&color=blue")
    await postback(client, workspace, click_id=click_id, txid="T-3", payout="50", status="pending")
    await postback(client, workspace, click_id=click_id, txid="T-3", payout="50", status="approved")

    response = await client.get(f"{log_url(workspace.id)}/{click_id}", headers=owner.headers)

    assert response.status_code == 200
    shown = response.json()
    assert (shown["sub3"], shown["params"]) == ("abc", {"color": "blue"})
    [conversion] = shown["conversions"]
    assert conversion["status"] == "approved"
    assert [(h["from_status"], h["to_status"]) for h in conversion["history"]] == [
        (None, "pending"),
        ("pending", "approved"),
    ]
