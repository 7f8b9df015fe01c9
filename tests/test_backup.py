"""`trilha backup` and `trilha restore`: a copy of a server taking clicks restores whole and
consistent; bad input ends in one clear line."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import POSTGRES_URL, Template, fresh_database
from tests.factories import make_campaign, make_workspace
from tests.test_serve import trilha_serve
from trilha.db.engine import make_engine
from trilha.db.schema import (
    click_hours,
    click_sub1_days,
    click_sub1_hours,
    clicks,
    conversions,
    deliveries,
    destinations,
    postback_log,
)
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.kinds import Kind

ROLLUPS = (click_hours, click_sub1_hours, click_sub1_days)


def trilha(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m trilha ARGS` on ``database_url``; output is stdout plus stderr."""
    return subprocess.run(
        [sys.executable, "-m", "trilha", *args],
        env={**os.environ, "TRILHA_DATABASE_URL": database_url, "COLUMNS": "200"},
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=120,
        check=False,
    )


class Clicker(threading.Thread):
    """Clicks on a link until stopped, keeping the ids of the clicks the server acknowledged."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.acknowledged: list[str] = []
        self.refused: list[int] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def run(self) -> None:
        with httpx.Client() as http:
            while not self._stopping.is_set():
                response = http.get(self.url, params={"sub1": "ad7"}, follow_redirects=False)
                if response.status_code != 302:
                    self.refused.append(response.status_code)
                    continue
                with self._lock:
                    self.acknowledged.append(response.headers["location"].rsplit("=", 1)[1])

    def so_far(self) -> set[str]:
        with self._lock:
            return set(self.acknowledged)

    def stop(self) -> None:
        self._stopping.set()
        self.join(timeout=30)


@pytest.fixture
def restored_url(tmp_path: Path, database_template: Template) -> Iterator[str]:
    """A second, fresh database to restore into."""
    directory = tmp_path / "restored"
    directory.mkdir()
    with fresh_database(directory, database_template) as url:
        yield url


async def totals(engine: AsyncEngine) -> dict[str, Any]:
    """Every count and sum the comparison looks at."""
    async with engine.connect() as conn:

        async def one(query: Any) -> Any:
            return (await conn.execute(query)).scalar_one()

        found: dict[str, Any] = {
            "clicks": await one(select(func.count()).select_from(clicks)),
            "click ids": set((await conn.execute(select(clicks.c.id))).scalars()),
            "conversions": await one(select(func.count()).select_from(conversions)),
            "conversion value": await one(select(func.sum(conversions.c.value_minor))),
            "postback log": await one(select(func.count()).select_from(postback_log)),
            "deliveries": await one(select(func.count()).select_from(deliveries)),
        }
        for rollup in ROLLUPS:
            found[rollup.name] = await one(select(func.coalesce(func.sum(rollup.c.clicks), 0)))
    return found


async def test_a_backup_of_a_server_taking_clicks_restores_whole_and_consistent(
    database_url: str, db: AsyncEngine, restored_url: str, tmp_path: Path
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://o.example.com/?c={click_id}")
    async with db.begin() as conn:
        destination = await create_destination(
            conn,
            workspace,
            Spec("Tracker", Kind.POSTBACK, "http://127.0.0.1:9/pb?tx={txid}"),
            now=datetime.now(UTC),
        )
        await conn.execute(
            update(destinations).where(destinations.c.id == destination.id).values(status="active")
        )
    backup = tmp_path / "trilha.backup"

    with trilha_serve(database_url, tmp_path, delivery_worker="false") as (base, _):
        clicker = Clicker(f"{base}/r/lp")
        clicker.start()
        while len(clicker.so_far()) < 30:
            await asyncio.sleep(0.05)
        for number, click_id in enumerate(sorted(clicker.so_far())[:3], start=1):
            sale = {"token": workspace.postback_token, "click_id": click_id, "txid": f"T{number}"}
            response = httpx.get(f"{base}/pb", params={**sale, "payout": f"{number}0,00"})
            assert response.status_code == 200, response.text
        acknowledged_before = clicker.so_far()
        made = trilha(database_url, "backup", str(backup))
        after_backup = len(clicker.so_far())
        while len(clicker.so_far()) < after_backup + 20:  # clicks keep arriving after it, too
            await asyncio.sleep(0.05)
        clicker.stop()
    assert clicker.refused == []

    assert made.returncode == 0, made.stdout
    assert oct(backup.stat().st_mode & 0o777) == "0o600"
    restored = trilha(restored_url, "restore", str(backup))
    assert restored.returncode == 0, restored.stdout
    assert "up to date" in restored.stdout

    served = await totals(db)
    copy = await totals(restored_engine := make_engine(restored_url))
    await restored_engine.dispose()
    if POSTGRES_URL is None:  # the backup is a database itself: the copy equals it in every sum
        taken = await totals(backup_engine := make_engine(f"sqlite:///{backup}"))
        await backup_engine.dispose()
        assert taken == copy
    assert acknowledged_before <= copy["click ids"] <= served["click ids"]
    assert copy["clicks"] < served["clicks"]  # the clicks after the backup are not in it
    for rollup in ROLLUPS:
        assert copy[rollup.name] == copy["clicks"], rollup.name
    assert (copy["conversions"], copy["conversion value"]) == (3, 6000)
    for name in ("conversions", "conversion value", "postback log", "deliveries"):
        assert copy[name] == served[name], name
    assert copy["deliveries"] == 3


async def test_it_refuses_to_overwrite_a_file_without_force(
    database_url: str, tmp_path: Path
) -> None:
    backup = tmp_path / "trilha.backup"
    backup.write_text("yesterday's")

    refused = trilha(database_url, "backup", str(backup))
    replaced = trilha(database_url, "backup", "--force", str(backup))

    assert refused.returncode == 1
    assert refused.stdout.strip() == f"error: {backup} exists; pass --force to replace it"
    assert replaced.returncode == 0, replaced.stdout
    assert backup.read_bytes()[:5] in (b"SQLit", b"PGDMP")


async def test_it_restores_over_a_database_with_data_only_with_force(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    backup = tmp_path / "trilha.backup"
    assert trilha(database_url, "backup", str(backup)).returncode == 0
    await make_workspace(db)

    refused = trilha(database_url, "restore", str(backup))
    forced = trilha(database_url, "restore", "--force", str(backup))

    assert refused.returncode == 1
    assert refused.stdout.strip().endswith("is not empty; pass --force to replace its contents")
    assert forced.returncode == 0, forced.stdout
    async with db.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(clicks))).scalar_one() == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "error: no such file: {file}"),
        (b"hello", "error: {file} is not a trilha backup"),
        (b"SQLite format 3\x00" + bytes(4000), "error: {file} is not a trilha backup"),
    ],
)
async def test_a_file_that_is_not_a_backup_is_refused_in_one_line(
    database_url: str, tmp_path: Path, content: bytes | None, message: str
) -> None:
    file = tmp_path / "not-a-backup"
    if content is not None:
        file.write_bytes(content)

    refused = trilha(database_url, "restore", str(file))

    assert refused.returncode == 1
    if POSTGRES_URL is not None and content is not None and content.startswith(b"SQLite"):
        message = (
            "error: {file} is a SQLite backup, but TRILHA_DATABASE_URL names a PostgreSQL database"
        )
    assert refused.stdout.strip() == message.format(file=file)


async def test_a_backup_of_the_other_kind_of_database_is_refused(
    database_url: str, tmp_path: Path
) -> None:
    file = tmp_path / "trilha.backup"
    if POSTGRES_URL is None:  # the header of pg_dump's custom format is enough to tell
        file.write_bytes(b"PGDMP" + bytes(100))
    else:
        assert trilha(database_url, "backup", str(file)).returncode == 0

    refused = trilha(f"sqlite:///{tmp_path / 'other.db'}", "restore", str(file))

    assert refused.returncode == 1
    assert refused.stdout.strip() == (
        f"error: {file} is a PostgreSQL backup, but TRILHA_DATABASE_URL names a SQLite database"
    )


async def test_a_backup_into_a_missing_directory_is_refused_in_one_line(
    database_url: str, tmp_path: Path
) -> None:
    file = tmp_path / "no-such-directory" / "trilha.backup"

    refused = trilha(database_url, "backup", str(file))

    assert refused.returncode == 1
    assert refused.stdout.strip() == f"error: {file}: No such file or directory"


async def test_an_unreachable_database_is_named_without_its_password(tmp_path: Path) -> None:
    url = "postgresql+psycopg://trilha:s3cret-pw@127.0.0.1:1/trilha"

    refused = trilha(url, "backup", str(tmp_path / "new.backup"))

    assert refused.returncode == 1
    assert refused.stdout.startswith("error: pg_dump failed: ")
    assert "s3cret-pw" not in refused.stdout
