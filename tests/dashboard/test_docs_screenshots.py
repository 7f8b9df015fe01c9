"""The screenshots in docs/dashboard.md, taken in a real Chromium at 1280 px in Portuguese, of a
workspace with two weeks of clicks, sales, costs and deliveries.

Every run takes them and checks each page; they replace the committed images only when asked,
so an ordinary run leaves those alone:

    TRILHA_SCREENSHOTS_DOCS=1 .venv/bin/python -m pytest tests/dashboard/test_docs_screenshots.py

Each is a PNG of the top of its page, 1280 px wide (the home's taller, to show its
chart), checked to stay under 200 KB.
"""

from __future__ import annotations

import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from playwright.async_api import BrowserContext, expect
from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import make_merchant, send_generic
from tests.factories import fetch_all, fetch_clicks, make_campaign, make_source
from trilha.db.schema import clicks, conversions, cost_models, deliveries, delivery_attempts
from trilha.db.schema import destinations as destination_table
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.kinds import Kind
from trilha.ids import new_id
from trilha.reports.rollups import rebuild_rollups
from trilha.settings import Settings

pytestmark = BROWSER

DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
DAYS = 14
# (campaign, traffic source, clicks a day, sales in a hundred clicks, ticket, CPC)
CAMPAIGNS = (
    ("Curso de Confeitaria: Black Friday", "Facebook Ads", 14, 9, "197,00", 450),
    ("Mentoria Finanças Pessoais", "Google Ads", 8, 6, "497,00", 900),
    ("E-book Receitas Fit", "TikTok Ads", 10, 5, "47,00", 150),
)
PAGES = {
    "home": "",
    "campaigns": "/campaigns",
    "report": "/reports?preset=last_7_days",
    "postback-log": "/postbacks",
    "deliveries": "/deliveries",
}

HEIGHT = {"home": 1040, "campaigns": 800, "report": 800, "postback-log": 800, "deliveries": 800}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """No delivery worker: the deliveries are marked sent, as a tracker would have answered."""
    return settings.model_copy(update={"delivery_worker": False})


async def two_weeks_of_sales(db: AsyncEngine, owner: Account, live_server: str) -> None:
    """Real clicks on the campaigns' links and real postbacks for their sales, then spread over
    the last two weeks (the click sums rebuilt), with costs and a tracker told of every sale."""
    workspace = owner.workspace
    chance = random.Random(27)
    await make_merchant(db, workspace, secret=None)
    async with db.begin() as conn:
        destination = await create_destination(
            conn,
            workspace,
            Spec("Keitaro", Kind.POSTBACK, "https://keitaro.example/pb?subid={sub1}"),
            now=datetime.now(UTC),
        )
        await conn.execute(
            update(destination_table)
            .where(destination_table.c.id == destination.id)
            .values(status="active")
        )
    sold: list[tuple[str, str]] = []
    async with httpx.AsyncClient() as client:
        for name, source_name, per_day, rate, ticket, cpc in CAMPAIGNS:
            source = await make_source(db, workspace, name=source_name)
            campaign = await make_campaign(db, workspace, name=name, source_id=source.id)
            async with db.begin() as conn:
                await conn.execute(
                    insert(cost_models).values(
                        id=new_id(),
                        workspace_id=workspace.id,
                        campaign_id=campaign.id,
                        starts_on=(datetime.now(UTC) - timedelta(days=DAYS + 1)).date(),
                        model="cpc",
                        currency="BRL",
                        rate=cpc * 10_000,  # cost units: a ten-thousandth of a centavo
                        event_types=[],
                        created_at=datetime.now(UTC),
                    )
                )
            for n in range(per_day * DAYS // 2):
                await client.get(
                    f"{live_server}/r/{campaign.slug}",
                    params={"sub1": f"criativo-{n % 3 + 1}"},
                    headers={"user-agent": f"Mozilla/5.0 (Linux; Android 14; visitor {n})"},
                )
            ids = [str(row["id"]) for row in await fetch_clicks(db, campaign_id=campaign.id)]
            sold += [(click_id, ticket) for click_id in ids if chance.randrange(100) < rate]
    chance.shuffle(sold)
    for n, (click_id, ticket) in enumerate(sold):
        await send_generic(
            live_server, workspace, click_id=click_id, txid=f"HP-{4100 + n}", payout=ticket
        )
    await send_generic(live_server, workspace, click_id="perdido-1", txid="HP-4999", payout="97")

    now = datetime.now(UTC)
    made = await fetch_clicks(db, workspace_id=workspace.id)
    told = await fetch_all(db, deliveries, workspace_id=workspace.id)
    async with db.begin() as conn:  # spread over the last two weeks, today's hours so far
        for row in made:
            days = chance.choice([0, 0, *range(DAYS)])
            hours = chance.uniform(0, 20 if days else max(now.hour - 1, 0.5))
            when = now - timedelta(days=days, hours=hours)
            await conn.execute(
                update(clicks).where(clicks.c.id == row["id"]).values(created_at=when)
            )
            await conn.execute(
                update(conversions)
                .where(conversions.c.click_id == row["id"])
                .values(created_at=when + timedelta(minutes=chance.randint(3, 50)))
            )
        await conn.run_sync(rebuild_rollups, workspace_id=workspace.id)
        for delivery in told:
            await conn.execute(
                update(deliveries)
                .where(deliveries.c.id == delivery["id"])
                .values(state="sent", attempts=1, finished_at=now)
            )
            await conn.execute(
                insert(delivery_attempts).values(
                    id=new_id(),
                    delivery_id=delivery["id"],
                    started_at=now,
                    request="GET https://keitaro.example/pb?subid=criativo-1",
                    status_code=200,
                    latency_ms=chance.randint(80, 240),
                    response="OK",
                    error="",
                    outcome="success",
                )
            )


async def test_it_takes_the_screenshots_of_the_main_pages(
    context: BrowserContext, db: AsyncEngine, owner: Account, live_server: str, tmp_path: Path
) -> None:
    await two_weeks_of_sales(db, owner, live_server)
    page = await context.new_page()
    await page.set_viewport_size({"width": 1280, "height": max(HEIGHT.values())})
    screenshots = DOCS_SCREENSHOTS if os.environ.get("TRILHA_SCREENSHOTS_DOCS") else tmp_path
    for name, tail in PAGES.items():
        response = await page.goto(f"/w/{owner.workspace.id}{tail}")
        assert response is not None, name
        assert response.status == 200, name
        if name == "home":
            await expect(page.locator("#home-chart[data-drawn='true'] canvas")).to_have_count(1)
        path = screenshots / f"{name}.png"
        await page.screenshot(
            path=str(path), clip={"x": 0, "y": 0, "width": 1280, "height": HEIGHT[name]}
        )
        assert path.stat().st_size < 200_000, (name, path.stat().st_size)
