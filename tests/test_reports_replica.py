"""TRILHA_REPORTS_DATABASE_URL: reports read from a replica, everything else from the primary.

A second database on the same server stands for the replica: a copy of the primary taken at one
moment, which then falls behind it, as a replica lagging in its replay does. A report answers
what the copy holds; the click log, written and read on the primary, answers what happened since.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from uuid import uuid4

import httpx
import pytest
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.apps import running_client
from tests.conftest import _admin
from tests.deliveries.conftest import eventually
from tests.factories import make_campaign
from tests.reports.test_api_reports import reports_url, visit
from tests.web.callers import make_owner
from trilha.db.engine import make_engine
from trilha.db.migrate import migrate
from trilha.db.schema import clicks
from trilha.reports.home import home
from trilha.runtime import Runtime
from trilha.settings import Settings

CANARY = "canary-password-7f3a"


# A replica is PostgreSQL's (with a SQLite primary the setting is refused: the tests below), so
# these tests make their primary on PostgreSQL whatever database the run tests: they run the same
# in the SQLite run and in the PostgreSQL one.
ADMIN_URL = os.environ.get(
    "TRILHA_TEST_POSTGRES_ADMIN_URL", "postgresql+psycopg://postgres@127.0.0.1/test"
)


def _on_server(name: str) -> str:
    return make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="module")
def primary_template() -> Iterator[str]:
    """A PostgreSQL database migrated once for the module, each test's primary a copy of it."""
    name = f"trilha_primary_{uuid4().hex[:12]}"
    with _admin(ADMIN_URL) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    migrate(_on_server(name))
    yield name
    with _admin(ADMIN_URL) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def database_url(primary_template: str) -> Iterator[str]:
    """The test's primary: a migrated PostgreSQL database of its own, dropped afterwards."""
    name = f"trilha_test_{uuid4().hex[:12]}"
    with _admin(ADMIN_URL) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{primary_template}"')
    yield _on_server(name)
    with _admin(ADMIN_URL) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def replica_of(database_url: str) -> Iterator[str]:
    """A copy of the primary as it is when the test asks for it (CREATE DATABASE ... TEMPLATE:
    no one may be connected to the primary then), dropped afterwards."""
    name = f"trilha_replica_{uuid4().hex[:12]}"
    primary = make_url(database_url)
    yield primary.set(database=name).render_as_string(hide_password=False)
    with _admin(database_url) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def copy_database(database_url: str, copy_url: str) -> None:
    with _admin(database_url) as admin:
        admin.execute(
            f'CREATE DATABASE "{make_url(copy_url).database}" '
            f'TEMPLATE "{make_url(database_url).database}"'
        )


async def count_clicks(url: str) -> int:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return (await conn.execute(select(func.count()).select_from(clicks))).scalar_one()
    finally:
        await engine.dispose()


async def test_reports_read_the_replica_while_clicks_are_written_and_logged_on_the_primary(
    settings: Settings, db: AsyncEngine, database_url: str, replica_of: str
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    async with running_client(settings) as client:
        await visit(client, campaign, 1)
    await db.dispose()
    copy_database(database_url, replica_of)  # the replica has replayed one click

    with_replica = settings.model_copy(update={"reports_database_url": replica_of})
    async with running_client(with_replica) as client:
        await visit(client, campaign, 2)  # not yet replayed
        await visit(client, campaign, 3)
        report = await client.get(
            reports_url(workspace.id), params={"preset": "today"}, headers=owner.headers
        )
        csv = await client.get(
            f"{reports_url(workspace.id)}/csv", params={"preset": "today"}, headers=owner.headers
        )
        log = await client.get(f"/api/v1/workspaces/{workspace.id}/clicks", headers=owner.headers)

    assert report.status_code == 200, report.text
    assert report.json()["totals"]["clicks"] == 1
    assert csv.status_code == 200, csv.text
    [header, row, *_] = csv.content.decode("utf-8-sig").splitlines()
    assert (header.split(";")[1], row.split(";")[1]) == ("clicks", "1")
    assert len(log.json()["clicks"]) == 3
    assert (await count_clicks(database_url), await count_clicks(replica_of)) == (3, 1)

    # The home screen's figures, handed the primary's connection as its page does.
    runtime = Runtime.from_settings(with_replica)
    try:
        async with runtime.read_engine.begin() as primary:
            screen = await runtime.reports.run(
                primary, workspace.id, home, workspace, now=datetime.now(UTC)
            )
    finally:
        await runtime.engine.dispose()
        assert runtime.reports_engine is not None
        await runtime.reports_engine.dispose()
    assert screen.today.totals.clicks == 1


async def test_without_a_replica_reports_read_the_primary(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    await visit(client, campaign, 1)

    report = await client.get(
        reports_url(workspace.id), params={"preset": "today"}, headers=owner.headers
    )

    assert report.json()["totals"]["clicks"] == 1


async def test_it_is_ready_when_the_replica_answers_at_the_codes_schema(
    settings: Settings, database_url: str, replica_of: str
) -> None:
    copy_database(database_url, replica_of)

    async with running_client(
        settings.model_copy(update={"reports_database_url": replica_of})
    ) as client:

        async def is_ready() -> bool:
            return (await client.get("/readyz")).status_code == 200

        await eventually(is_ready)
        body = (await client.get("/readyz")).json()

    assert body["checks"]["reports_database"] == "ok"


async def test_it_is_not_ready_when_the_replica_does_not_answer(settings: Settings) -> None:
    gone = f"postgresql+psycopg://postgres:{CANARY}@127.0.0.1:1/test"  # nothing on port 1
    async with running_client(settings.model_copy(update={"reports_database_url": gone})) as c:
        response = await c.get("/readyz")

    body = response.json()
    assert response.status_code == 503
    assert "reports_database" in body["failing"]
    assert body["checks"]["reports_database"].startswith("unreachable")
    assert body["checks"]["database"] == "ok"
    assert CANARY not in response.text


async def test_a_report_gets_503_while_the_replica_does_not_answer_and_clicks_go_on(
    settings: Settings, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    campaign = await make_campaign(db, workspace, slug="lp")
    gone = f"postgresql+psycopg://postgres:{CANARY}@127.0.0.1:1/test"  # nothing on port 1
    async with running_client(settings.model_copy(update={"reports_database_url": gone})) as c:
        await visit(c, campaign, 1)
        report = await c.get(reports_url(workspace.id), headers=owner.headers)
        log = await c.get(f"/api/v1/workspaces/{workspace.id}/clicks", headers=owner.headers)

    assert report.status_code == 503
    assert "replica" in report.text
    assert CANARY not in report.text
    assert len(log.json()["clicks"]) == 1


async def test_it_is_not_ready_when_the_replica_is_not_migrated(
    settings: Settings, replica_of: str
) -> None:
    with _admin(ADMIN_URL) as admin:  # an empty database: no tables, no migration
        admin.execute(f'CREATE DATABASE "{make_url(replica_of).database}"')
    with_replica = settings.model_copy(update={"reports_database_url": replica_of})
    async with running_client(with_replica) as client:
        body = (await client.get("/readyz")).json()

    assert "reports_database" in body["failing"]
    assert body["checks"]["reports_database"].startswith("not migrated")


async def test_the_start_log_names_the_replica_without_its_password(
    settings: Settings, capfd: pytest.CaptureFixture[str]
) -> None:
    replica = f"postgresql+psycopg://trilha:{CANARY}@replica.example:5432/trilha"
    with_replica = settings.model_copy(update={"reports_database_url": replica})
    async with running_client(with_replica):
        pass

    logged = capfd.readouterr().err
    assert "reports read from the replica at postgresql+psycopg://trilha:***@replica" in logged
    assert CANARY not in logged
    assert CANARY not in repr(with_replica)


def test_it_refuses_a_replica_of_a_sqlite_database() -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(
            database_url="sqlite+aiosqlite:///./trilha.db",
            reports_database_url=f"postgresql://trilha:{CANARY}@replica/trilha",
            _env_file=None,
        )

    assert "TRILHA_DATABASE_URL is not PostgreSQL" in str(refused.value)
    assert CANARY not in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        f"sqlite:///./{CANARY}.db",
        f"mysql://trilha:{CANARY}@replica/trilha",
        f"postgresql://trilha:{CANARY}@replica:port/trilha",
        CANARY,
    ],
)
def test_it_refuses_a_replica_that_is_not_a_postgresql_url(url: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(
            database_url="postgresql://trilha@primary/trilha",
            reports_database_url=url,
            _env_file=None,
        )

    assert refused.value.errors()[0]["loc"] == ("reports_database_url",)
    assert "TRILHA_REPORTS_DATABASE_URL" in str(refused.value)
    assert CANARY not in str(refused.value)


def test_unset_or_blank_there_is_no_replica() -> None:
    assert Settings(_env_file=None).reports_database_url is None
    assert Settings(reports_database_url="  ", _env_file=None).reports_database_url is None


@pytest.mark.parametrize(
    ("database", "replica", "said"),
    [
        (
            "sqlite+aiosqlite:///./trilha.db",
            f"postgresql://trilha:{CANARY}@replica/trilha",
            "TRILHA_REPORTS_DATABASE_URL is set but TRILHA_DATABASE_URL is not PostgreSQL",
        ),
        (
            "postgresql://trilha@127.0.0.1:1/trilha",
            f"mysql://trilha:{CANARY}@replica/trilha",
            "TRILHA_REPORTS_DATABASE_URL names a mysql database",
        ),
    ],
)
def test_trilha_serve_refuses_to_start_saying_why_in_one_line(
    tmp_path: Path, database: str, replica: str, said: str
) -> None:
    env = {**os.environ, "TRILHA_DATABASE_URL": database, "TRILHA_REPORTS_DATABASE_URL": replica}
    if database.startswith("postgresql"):
        # Refused too: every refused field is named. (The check across fields, SQLite's above,
        # runs only once every field is valid.)
        env["TRILHA_DATABASE_POOL_SIZE"] = "0"
    started = subprocess.run(
        [sys.executable, "-m", "trilha", "serve"],
        cwd=tmp_path,
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
        check=False,
    )

    assert started.returncode == 1
    assert started.stdout == ""
    lines = started.stderr.splitlines()
    assert f"error: {said}" in [line[: len(said) + 7] for line in lines]
    if database.startswith("postgresql"):
        pool = "error: TRILHA_DATABASE_POOL_SIZE: Input should be greater than or equal to 1"
        assert pool in lines
    assert "Traceback" not in started.stderr
    assert CANARY not in started.stderr
    assert not (tmp_path / "trilha.db").exists()
