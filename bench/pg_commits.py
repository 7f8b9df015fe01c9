"""PostgreSQL's commit rate on this machine: the ceiling of every durable write trilha makes.

Run from the repository root (docs/performance.md, "The ceiling", has the figures and the model
built on them):

    .venv/bin/python bench/pg_commits.py [--url postgresql://postgres@127.0.0.1/test]
                                         [--clients 1,2,4,8,16] [--duration 5]

It creates a database ``trilha_bench_commits`` beside the one ``--url`` names, a table with a
click-sized row, and runs ``pgbench`` (PostgreSQL's own client, in its ``postgresql-client``
package) with a script of one INSERT per transaction, for each number of clients in turn: the
commits a second PostgreSQL makes with ``synchronous_commit`` on (its default, which trilha
keeps), each a flush of the WAL to disk. With more clients, commits share a flush (PostgreSQL's
group commit), so the rate grows with clients until the disk or the CPU is the limit. The
database is dropped afterwards.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from urllib.parse import urlsplit, urlunsplit

import psycopg

DATABASE = "trilha_bench_commits"
SCRIPT = (
    "INSERT INTO bench_commits (id, workspace_id, created_at, ip, user_agent, params)"
    " VALUES (md5(random()::text), 'w', now(), '10.0.0.1', repeat('a', 130), '{}');\n"
)
TABLE = (
    "CREATE TABLE bench_commits (id text PRIMARY KEY, workspace_id text NOT NULL,"
    " created_at timestamptz NOT NULL, ip text NOT NULL, user_agent text NOT NULL,"
    " params json NOT NULL)"
)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def commits_per_second(url: str, clients: int, duration: float) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".sql") as script:
        script.write(SCRIPT)
        script.flush()
        run = subprocess.run(
            [
                "pgbench",
                "--no-vacuum",
                f"--client={clients}",
                f"--jobs={min(clients, 2)}",
                f"--time={max(1, round(duration))}",
                f"--file={script.name}",
                _with_database(url, DATABASE),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    found = re.search(r"tps = ([\d.]+)", run.stdout)
    if found is None:
        raise RuntimeError(f"pgbench gave no rate:\n{run.stdout}\n{run.stderr}")
    return float(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1/test")
    parser.add_argument("--clients", default="1,2,4,8,16", help="comma-separated client counts")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per client count")
    args = parser.parse_args()
    with psycopg.connect(args.url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    try:
        with psycopg.connect(_with_database(args.url, DATABASE), autocommit=True) as conn:
            conn.execute(TABLE)
            settings = {
                name: conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
                for name in ("synchronous_commit", "wal_sync_method", "commit_delay")
            }
        print(f"PostgreSQL settings: {settings}")
        print("| clients | commits/s |\n|---:|---:|")
        for clients in (int(c) for c in args.clients.split(",")):
            rate = commits_per_second(args.url, clients, args.duration)
            print(f"| {clients} | {rate:,.0f} |")
    finally:
        with psycopg.connect(args.url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE}")


if __name__ == "__main__":
    main()
