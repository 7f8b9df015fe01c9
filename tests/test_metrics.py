"""GET /metrics: each counter moves when its event happens, with labels from closed sets only;
the outbox's gauges are read at the scrape; the metrics are answered to the allowed addresses or
the bearer token alone; several server processes' counts add up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.apps import running_client
from tests.conftest import settings_for
from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Receiver
from tests.dns_server import DnsServer
from tests.factories import make_api_key, make_campaign, make_user, make_workspace
from tests.test_serve import trilha_serve
from tests.web.browsers import post_form
from trilha.app import TrilhaApp
from trilha.db.engine import make_engine
from trilha.db.schema import deliveries
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind
from trilha.settings import Settings

TOKEN = "metrics-token-0f8e7d6c5b4a"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return settings_for(database_url, dns_server).model_copy(
        update={
            "delivery_allow_private": True,
            "delivery_poll_interval": 0.2,
            "delivery_timeout": 2.0,
            "metrics_token": TOKEN,
        }
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
async def local(app: TrilhaApp) -> AsyncIterator[httpx.AsyncClient]:
    """A client on the loopback, as Prometheus on the same machine."""
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


def samples(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def scrape(client: httpx.AsyncClient, **headers: str) -> str:
    response = await client.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    return response.text


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    key = (name, frozenset(labels.items()))
    return after[key] - before.get(key, 0.0)


async def test_each_counter_moves_with_its_event_and_closed_labels(
    app: TrilhaApp,
    client: httpx.AsyncClient,
    local: httpx.AsyncClient,
    db: AsyncEngine,
    settings: Settings,
    receiver: Receiver,
) -> None:
    user = await make_user(db)
    workspace = await make_workspace(db, owner=user)
    key = await make_api_key(db, user)
    spec = Spec("Tracker", Kind.POSTBACK, receiver.url("/ok?cid={click_id}"))
    await make_destination(db, workspace, spec, settings=settings)
    before = samples(await scrape(local))

    click = await click_on(client, db, workspace)
    await report(client, workspace, click["id"])
    refused = await post_form(
        app, "/login", {"email": user.email, "password": "wrong", "next": "/"}
    )
    shown = await client.get(
        f"/api/v1/workspaces/{workspace.id}/reports",
        params={"preset": "today"},
        headers={"authorization": f"Bearer {key}"},
    )

    async def delivered() -> bool:
        now = samples(await scrape(local))
        return (
            moved(before, now, "trilha_delivery_attempts_total", outcome="success", kind="postback")
            == 1
        )

    await eventually(delivered)
    text = await scrape(local)
    after = samples(text)

    assert (refused.status_code, shown.status_code) == (401, 200)
    assert moved(before, after, "trilha_clicks_total") == 1
    assert (
        moved(before, after, "trilha_postbacks_total", outcome="created", platform="generic") == 1
    )
    assert moved(before, after, "trilha_login_refusals_total", reason="credentials") == 1
    assert moved(before, after, "trilha_report_seconds_count", report="run_report") == 1
    for writer in ("click", "postback"):
        assert moved(before, after, "trilha_group_commit_batch_size_count", writer=writer) >= 1
        assert moved(before, after, "trilha_group_commit_seconds_count", writer=writer) >= 1
    for secret in (workspace.id, workspace.postback_token, key, TOKEN, click["id"], user.email):
        assert secret not in text
    labels = {label for (name, pairs) in after for label, _ in pairs if name.startswith("trilha")}
    assert labels <= {"outcome", "platform", "kind", "writer", "report", "reason", "le"}


async def test_the_outbox_gauges_count_what_is_still_to_send(
    settings: Settings, db: AsyncEngine, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    spec = Spec("Tracker", Kind.POSTBACK, receiver.url("/ok"))
    await make_destination(db, workspace, spec, settings=settings)
    no_worker = settings.model_copy(update={"delivery_worker": False})
    async with running_client(no_worker) as client:
        empty = samples(await scrape(client, authorization=f"Bearer {TOKEN}"))
        click = await click_on(client, db, workspace)
        await report(client, workspace, click["id"])
        async with db.begin() as conn:
            created = datetime.now(UTC) - timedelta(seconds=120)
            await conn.execute(update(deliveries).values(created_at=created))
        queued = samples(await scrape(client, authorization=f"Bearer {TOKEN}"))

    gauge = frozenset[tuple[str, str]]()
    assert empty[("trilha_outbox_depth", gauge)] == 0
    assert empty[("trilha_outbox_oldest_age_seconds", gauge)] == 0
    assert queued[("trilha_outbox_depth", gauge)] == 1
    assert 120 <= queued[("trilha_outbox_oldest_age_seconds", gauge)] < 180


async def test_it_answers_the_allowed_addresses_and_the_token_alone(
    app: TrilhaApp, client: httpx.AsyncClient, local: httpx.AsyncClient
) -> None:
    outside = await client.get("/metrics")
    wrong = await client.get("/metrics", headers={"authorization": "Bearer not-the-token"})
    right = await client.get("/metrics", headers={"authorization": f"Bearer {TOKEN}"})
    loopback = await local.get("/metrics")
    # A visitor's request passed on by the proxy on the loopback is the visitor's.
    forwarded = await local.get("/metrics", headers={"x-forwarded-for": "203.0.113.5"})

    assert (outside.status_code, wrong.status_code) == (403, 401)
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert (right.status_code, loopback.status_code) == (200, 200)
    assert forwarded.status_code == 403
    assert TOKEN not in outside.text + wrong.text


def test_the_counts_of_several_server_processes_add_up(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def arrange() -> str:
        engine = make_engine(database_url)
        try:
            workspace = await make_workspace(engine)
            return (await make_campaign(engine, workspace)).slug
        finally:
            await engine.dispose()

    slug = asyncio.run(arrange())
    directory = tmp_path / "metrics"
    directory.mkdir()
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(directory))
    clicks = ("trilha_clicks_total", frozenset[tuple[str, str]]())
    with (
        trilha_serve(database_url, tmp_path, workers="2") as (base, _),
        httpx.Client(base_url=base) as http,
    ):
        for _ in range(20):
            assert http.get(f"/r/{slug}").status_code == 302
        # Each scrape is answered by either process: every one sees the sum.
        counts = {samples(http.get("/metrics").text)[clicks] for _ in range(6)}
        ready = http.get("/readyz")

    assert counts == {20}
    assert len(list(directory.glob("counter_*.db"))) == 2
    assert ready.status_code == 200, ready.text


async def test_it_shows_the_counters_without_the_outbox_when_the_database_is_gone(
    settings: Settings, tmp_path: Path
) -> None:
    if settings.database_url.startswith("postgresql"):
        gone = "postgresql+psycopg://postgres@127.0.0.1:1/test"  # nothing listens on port 1
    else:
        gone = f"sqlite+aiosqlite:///{tmp_path}/removed/trilha.db"  # no such directory
    async with running_client(settings.model_copy(update={"database_url": gone})) as client:
        text = await scrape(client, authorization=f"Bearer {TOKEN}")

    assert "trilha_clicks_total" in text
    assert "trilha_outbox_depth" not in text
