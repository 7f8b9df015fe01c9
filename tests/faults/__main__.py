"""`python -m tests.faults --kills 20`: the full fault run, on SQLite or, with
TRILHA_TEST_DATABASE_URL set, on a fresh PostgreSQL database that is dropped afterwards."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import uuid4

import psycopg
from sqlalchemy.engine import make_url

from tests.faults.harness import run_faults
from trilha.db.migrate import migrate


@contextmanager
def fresh_database(workdir: Path) -> Iterator[str]:
    postgres_url = os.environ.get("TRILHA_TEST_DATABASE_URL")
    if postgres_url is None:
        url = f"sqlite+aiosqlite:///{workdir / 'trilha.db'}"
        migrate(url)
        yield url
        return
    server = make_url(postgres_url)
    name = f"trilha_faults_{uuid4().hex[:12]}"

    def admin(statement: str) -> None:
        with psycopg.connect(
            host=server.host,
            port=server.port or 5432,
            user=server.username,
            password=server.password,
            dbname=server.database,
            autocommit=True,
        ) as conn:
            conn.execute(statement)

    admin(f'CREATE DATABASE "{name}"')
    try:
        url = server.set(database=name).render_as_string(hide_password=False)
        migrate(url)
        yield url
    finally:
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.faults", description=__doc__)
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs of the server")
    parser.add_argument("--seed", type=int, help="random seed (printed; default: a new one)")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    args = parser.parse_args()
    seed = random.randrange(2**32) if args.seed is None else args.seed
    with tempfile.TemporaryDirectory(prefix="trilha-faults-") as tmp:
        workdir = Path(tmp)
        with fresh_database(workdir) as url:
            report = asyncio.run(
                run_faults(url, workdir, kills=args.kills, seed=seed, workers=args.workers)
            )
    for line in report.lines():
        print(line)  # noqa: T201
    return 0 if report.holds else 1


if __name__ == "__main__":
    sys.exit(main())
