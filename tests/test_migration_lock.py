"""Migrations run under a lock: processes started together migrate one at a time, once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text

from tests.conftest import empty_database
from tests.test_migrations import schema_differences
from trilha.db.migrate import alembic_config, migrate, migration_lock
from trilha.errors import MigrationLocked

ROOT = Path(__file__).parent.parent
PROCESSES = 4
WAITING = "another process is migrating the database; waiting"


@pytest.fixture
def empty_database_url(tmp_path: Path) -> Iterator[str]:
    with empty_database(tmp_path) as url:
        yield url


def current_revision(url: str) -> str | None:
    engine = create_engine(alembic_config(url).attributes["url"])
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def race_to_migrate(url: str, directory: Path) -> list[subprocess.CompletedProcess[str]]:
    """Start PROCESSES migrations at once (tests/migration_race.py) and wait for them all."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, sys.path))}
    started = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.migration_race", url, str(directory), str(PROCESSES)],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    finished = []
    for process in started:
        stdout, stderr = process.communicate(timeout=120)
        finished.append(
            subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        )
    return finished


def test_processes_started_together_migrate_one_at_a_time_and_once(
    empty_database_url: str, tmp_path: Path
) -> None:
    head = ScriptDirectory.from_config(alembic_config(empty_database_url)).get_current_head()

    processes = race_to_migrate(empty_database_url, tmp_path)

    records = [
        [json.loads(line) for line in path.read_text().splitlines()]
        for path in tmp_path.glob("*.jsonl")
    ]
    sections = sorted(
        (lines[0]["time"], lines[-1]["time"] if lines[-1]["event"] == "end" else float("inf"))
        for lines in records
    )
    overlaps = [(a, b) for a, b in pairwise(sections) if b[0] < a[1]]
    assert overlaps == [], "two processes were migrating at the same time"
    assert [p.returncode for p in processes] == [0] * PROCESSES, [p.stderr for p in processes]
    assert sorted(lines[0]["revision"] or "" for lines in records) == [""] + [head] * (
        PROCESSES - 1
    ), "exactly one process applied the migrations; the others found nothing to do"
    waited = [
        json.loads(line)["message"]
        for p in processes
        for line in p.stderr.splitlines()
        if WAITING in line
    ]
    assert len(waited) == PROCESSES - 1
    assert current_revision(empty_database_url) == head
    assert schema_differences(empty_database_url) == []


def test_a_process_gives_up_waiting_and_names_the_one_holding_the_lock(
    database_url: str,
) -> None:
    engine = create_engine(alembic_config(database_url).attributes["url"])
    try:
        with engine.connect() as conn, migration_lock(conn, wait=0):
            if conn.dialect.name == "postgresql":
                holder = f"PostgreSQL backend {conn.scalar(text('SELECT pg_backend_pid()'))}"
                conn.commit()
            else:
                holder = f"process {os.getpid()} on "
            with pytest.raises(MigrationLocked) as failure:
                migrate(database_url, lock_wait=0.3)
    finally:
        engine.dispose()

    assert failure.value.message.startswith("gave up after waiting 0.3 s")
    assert holder in failure.value.message
