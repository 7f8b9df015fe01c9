"""One of the processes tests/test_migration_lock.py starts together: it waits at a barrier for
the others, then migrates, writing down when its Alembic upgrade ran and from which revision.

    python -m tests.migration_race URL DIRECTORY PROCESSES

Each Alembic upgrade sleeps half a second before it starts, so that upgrades not kept apart by
the lock are sure to overlap. Records go to DIRECTORY/<pid>.jsonl, one JSON object a line: a
"start" before the upgrade, an "end" after it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext

from trilha.db.migrate import migrate
from trilha.logs import configure_logging
from trilha.settings import Settings

BARRIER_TIMEOUT = 60.0  # seconds for every process to start
HOLD = 0.5  # seconds each upgrade sleeps before it starts


def record(directory: Path, **fields: object) -> None:
    with (directory / f"{os.getpid()}.jsonl").open("a") as file:
        file.write(json.dumps({"pid": os.getpid(), "time": time.time(), **fields}) + "\n")


def wait_for_the_others(directory: Path, processes: int) -> None:
    """Say this process is ready, then wait until all ``processes`` are."""
    ready = directory / "ready"
    ready.mkdir(exist_ok=True)
    (ready / str(os.getpid())).touch()
    deadline = time.monotonic() + BARRIER_TIMEOUT
    while len(list(ready.iterdir())) < processes:
        if time.monotonic() > deadline:
            sys.exit("the other processes never got ready")
        time.sleep(0.005)


def recording_upgrades(directory: Path) -> None:
    """Make every Alembic upgrade in this process record its start, revision and end."""
    upgrade = command.upgrade

    def recorded_upgrade(
        config: Config, revision: str, sql: bool = False, tag: str | None = None
    ) -> None:
        before = MigrationContext.configure(config.attributes["connection"]).get_current_revision()
        record(directory, event="start", revision=before)
        time.sleep(HOLD)
        upgrade(config, revision, sql, tag)
        record(directory, event="end")

    command.upgrade = recorded_upgrade


def main() -> None:
    url, directory, processes = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    configure_logging(Settings(log_format="json", _env_file=None))
    recording_upgrades(directory)
    wait_for_the_others(directory, processes)
    migrate(url)


if __name__ == "__main__":
    main()
