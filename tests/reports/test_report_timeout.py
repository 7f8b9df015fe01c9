"""A report whose queries run past TRILHA_REPORT_TIMEOUT is stopped in the database and answered
503 with Retry-After, on the API (JSON and CSV) and on the dashboard."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import settings_for
from tests.dns_server import DnsServer
from tests.reports.heavy import HEAVY_LEVELS, add_clicks
from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp
from trilha.settings import Settings

CLICKS = 100_000  # adding them up takes far longer than the time limit below
STOPPED = (
    "the report ran past its time limit and was stopped; "
    "choose a shorter period, fewer levels or a filter"
)


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return settings_for(database_url, dns_server).model_copy(update={"report_timeout": 0.001})


async def test_it_stops_a_report_past_its_time_limit_with_503(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await add_clicks(db, workspace, CLICKS)
    url = f"/api/v1/workspaces/{workspace.id}/reports"

    for path in (url, f"{url}/csv"):
        response = await client.get(path, params=HEAVY_LEVELS, headers=owner.headers)

        assert response.status_code == 503, response.text
        assert response.headers["retry-after"] == "60"
        assert response.json() == {"detail": STOPPED}


async def test_the_dashboard_says_a_report_ran_past_its_time_limit(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await add_clicks(db, workspace, CLICKS)
    browser, _ = await signed_in(app, db, owner.user)

    async with browser:
        page = await browser.get(f"/w/{workspace.id}/reports", params=HEAVY_LEVELS)

    assert page.status_code == 503
    assert page.headers["retry-after"] == "60"
    assert "Indisponível no momento" in page.text
    assert "o relatório passou do tempo limite e foi interrompido" in page.text
