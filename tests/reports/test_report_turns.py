"""Reports never cost clicks: a report reads without the write lock, and a workspace runs only
TRILHA_REPORTS_AT_ONCE of them at once in a process; the next waits briefly, then gets 429."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import settings_for
from tests.dns_server import DnsServer
from tests.reports.heavy import HEAVY_LEVELS, add_clicks
from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp
from trilha.db.schema import clicks
from trilha.errors import TooManyRequests
from trilha.reports.limits import ReportLimiter
from trilha.settings import Settings

CLICKS = 300_000  # a report over them takes a good while longer than the queue wait below


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return settings_for(database_url, dns_server).model_copy(
        update={"reports_at_once": 1, "report_queue_wait": 0.01}
    )


def reports_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/reports"


async def one_refused(
    *requests: asyncio.Task[httpx.Response],
) -> tuple[httpx.Response, asyncio.Task[httpx.Response]]:
    """Of two reports of one workspace asked at once: the one refused, and the one running."""
    done, running = await asyncio.wait(requests, return_when=asyncio.FIRST_COMPLETED)
    assert len(done) == len(running) == 1
    return done.pop().result(), running.pop()


async def test_it_refuses_a_report_past_the_workspace_s_turns_but_runs_another_workspace_s(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, busy = await make_owner(db)
    await add_clicks(db, busy, CLICKS)
    other_owner, other = await make_owner(db)
    url = reports_url(busy.id)

    refused, running = await one_refused(
        asyncio.create_task(client.get(url, params=HEAVY_LEVELS, headers=owner.headers)),
        asyncio.create_task(client.get(f"{url}/csv", params=HEAVY_LEVELS, headers=owner.headers)),
    )
    elsewhere = await client.get(reports_url(other.id), headers=other_owner.headers)

    assert refused.status_code == 429, refused.text
    assert refused.headers["retry-after"] == "10"  # TRILHA_REPORT_TIMEOUT, rounded up
    assert refused.json() == {
        "detail": "this workspace already runs 1 reports at once, its limit; try again shortly"
    }
    assert elsewhere.status_code == 200, elsewhere.text
    assert not running.done()  # another workspace's report ran beside it
    assert (await running).status_code == 200
    again = await client.get(url, params={"group_by": "os"}, headers=owner.headers)
    assert again.status_code == 200  # its turn came back


async def test_a_click_is_recorded_while_a_report_runs(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await add_clicks(db, workspace, CLICKS)
    url = reports_url(workspace.id)
    assert (await client.get(f"/r/{campaign.slug}")).status_code == 302  # the writer is running

    refused, running = await one_refused(
        asyncio.create_task(client.get(url, params=HEAVY_LEVELS, headers=owner.headers)),
        asyncio.create_task(client.get(url, params=HEAVY_LEVELS, headers=owner.headers)),
    )
    click = await client.get(f"/r/{campaign.slug}")

    assert refused.status_code == 429  # so the other report is running
    assert click.status_code == 302
    assert not running.done()  # the click's write did not wait for the report's read
    async with db.connect() as conn:
        assert await conn.scalar(select(func.count()).select_from(clicks)) == CLICKS + 2
    assert (await running).status_code == 200


async def test_the_dashboard_says_when_a_workspace_runs_its_reports_at_once(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await add_clicks(db, workspace, CLICKS)
    browser, _ = await signed_in(app, db, owner.user)
    page = f"/w/{workspace.id}/reports"

    async with browser:
        refused, running = await one_refused(
            asyncio.create_task(browser.get(page, params=HEAVY_LEVELS)),
            asyncio.create_task(browser.get(f"{page}/csv", params=HEAVY_LEVELS)),
        )
        assert (await running).status_code == 200

    assert refused.status_code == 429
    assert refused.headers["retry-after"] == "10"
    assert "Ocupado: tente de novo em instantes" in refused.text
    assert "este workspace já roda 1 relatórios ao mesmo tempo, o seu limite" in refused.text


async def test_a_report_waiting_for_its_turn_gets_it_when_one_ends_within_the_wait() -> None:
    turns = ReportLimiter(at_once=1, queue_wait=30, time_limit=10)
    ended = asyncio.Event()

    async def hold() -> None:
        async with turns.turn("busy"):
            await ended.wait()

    async def wait_for_a_turn() -> str:
        async with turns.turn("busy"):
            return "ran"

    holder = asyncio.create_task(hold())
    await asyncio.sleep(0)
    waiter = asyncio.create_task(wait_for_a_turn())
    await asyncio.sleep(0)
    assert not waiter.done()
    ended.set()

    assert await waiter == "ran"
    await holder


async def test_turns_are_counted_per_workspace_and_given_back() -> None:
    turns = ReportLimiter(at_once=2, queue_wait=0, time_limit=7.5)

    async with turns.turn("busy"), turns.turn("busy"):
        with pytest.raises(TooManyRequests) as refused:
            async with turns.turn("busy"):
                pass
        async with turns.turn("other"):
            pass
    async with turns.turn("busy"), turns.turn("busy"):
        pass

    assert refused.value.retry_after == 8
