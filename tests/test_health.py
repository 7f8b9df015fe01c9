"""GET /healthz answers while the process runs; GET /readyz only while the database answers,
its migrations are at head and a delivery worker has looked at the outbox lately, else 503
naming the check that failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.apps import running_client
from tests.deliveries.conftest import eventually
from trilha.deliveries.heartbeat import record_heartbeat
from trilha.settings import Settings


async def ready(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/readyz")
    body: dict[str, Any] = response.json()
    body["code"] = response.status_code
    return body


async def test_it_is_ready_once_its_worker_has_looked_at_the_outbox(
    client: httpx.AsyncClient,
) -> None:
    async def is_ready() -> bool:
        return (await client.get("/readyz")).status_code == 200

    await eventually(is_ready)

    body = await ready(client)
    assert body == {
        "code": 200,
        "status": "ready",
        "checks": {"database": "ok", "migrations": "ok", "worker": "ok"},
    }
    health = await client.get("/healthz")
    assert (health.status_code, health.text) == (200, "ok\n")
    assert (await client.get("/api/v1/health")).json() == {"status": "ok", "database": "ok"}


async def test_it_is_alive_but_not_ready_when_the_database_does_not_answer(
    settings: Settings, tmp_path: Path
) -> None:
    if settings.database_url.startswith("postgresql"):
        gone = "postgresql+psycopg://postgres@127.0.0.1:1/test"  # nothing listens on port 1
    else:
        gone = f"sqlite+aiosqlite:///{tmp_path}/removed/trilha.db"  # no such directory
    async with running_client(settings.model_copy(update={"database_url": gone})) as client:
        health = await client.get("/healthz")
        body = await ready(client)

    assert health.status_code == 200
    assert body["code"] == 503
    assert body["status"] == "unavailable"
    assert body["failing"] == ["database", "migrations", "worker"]
    assert body["checks"]["database"].startswith("unreachable")
    assert body["checks"]["migrations"] == "not checked"


async def test_it_is_not_ready_when_its_migrations_are_behind(
    settings: Settings, db: AsyncEngine
) -> None:
    async with db.begin() as conn:
        head = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalar_one()
        behind = f"{int(head) - 1:04d}"
        await conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": behind})
        await record_heartbeat(conn, now=datetime.now(UTC))
    no_worker = settings.model_copy(update={"delivery_worker": False})
    async with running_client(no_worker) as client:
        body = await ready(client)

    assert body["code"] == 503
    assert body["failing"] == ["migrations"]
    assert body["checks"]["migrations"] == (
        f"at {behind}, not at head {head}: run `trilha migrate`"
    )


async def test_it_is_not_ready_before_any_worker_looked_at_the_outbox(
    settings: Settings,
) -> None:
    async with running_client(settings.model_copy(update={"delivery_worker": False})) as client:
        body = await ready(client)

    assert body["code"] == 503
    assert body["failing"] == ["worker"]
    assert body["checks"] == {
        "database": "ok",
        "migrations": "ok",
        "worker": "no delivery worker has looked at the outbox yet",
    }


async def test_it_is_not_ready_when_the_worker_was_last_seen_too_long_ago(
    settings: Settings, db: AsyncEngine
) -> None:
    no_worker = settings.model_copy(update={"delivery_worker": False, "ready_worker_age": 60})
    async with db.begin() as conn:
        await record_heartbeat(conn, now=datetime.now(UTC) - timedelta(seconds=90))
    async with running_client(no_worker) as client:
        stale = await ready(client)
        async with db.begin() as conn:
            await record_heartbeat(conn, now=datetime.now(UTC) - timedelta(seconds=30))
        recent = await ready(client)

    assert stale["code"] == 503
    assert stale["failing"] == ["worker"]
    assert stale["checks"]["worker"].startswith("no delivery worker has looked at the outbox for 9")
    assert recent["code"] == 200


async def test_the_worker_notes_when_it_looked_at_the_outbox(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    started = datetime.now(UTC)

    async def noted() -> bool:
        async with db.connect() as conn:
            value = (
                await conn.execute(
                    text("SELECT value FROM instance WHERE key = 'delivery_worker_seen_at'")
                )
            ).scalar()
        return value is not None and datetime.fromisoformat(value) >= started - timedelta(seconds=1)

    await eventually(noted)
