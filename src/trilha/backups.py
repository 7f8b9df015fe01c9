"""Back up the database to one file and restore it: SQLite through its online backup API,
PostgreSQL through pg_dump and pg_restore. Either is safe while trilha serves."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SQLAlchemyError

from trilha.db.engine import SQLITE_BUSY_TIMEOUT_MS, sync_url
from trilha.db.migrate import alembic_config
from trilha.db.partitions import is_partition
from trilha.errors import TrilhaError

SQLITE_HEADER = b"SQLite format 3\x00"
PG_DUMP_HEADER = b"PGDMP"
# A database holding any of these is not empty: restoring over it needs --force.
DATA_TABLES = ("users", "workspaces", "clicks", "postback_log")


class Kind(StrEnum):
    SQLITE = "SQLite"
    POSTGRESQL = "PostgreSQL"


@dataclass(frozen=True, slots=True)
class Database:
    """The database a URL names, as the backup tools reach it."""

    kind: Kind
    url: URL

    @classmethod
    def from_url(cls, url: str) -> Database:
        parsed = make_url(sync_url(url))
        backend = parsed.get_backend_name()
        if backend == "sqlite":
            if not parsed.database or parsed.database == ":memory:":
                raise TrilhaError("TRILHA_DATABASE_URL names no SQLite file")
            return cls(Kind.SQLITE, parsed)
        if backend == "postgresql":
            return cls(Kind.POSTGRESQL, parsed)
        raise TrilhaError(f"cannot back up a {backend} database")

    @property
    def path(self) -> Path:
        return Path(self.url.database or "")

    def __str__(self) -> str:
        return self.url.render_as_string(hide_password=True)


def back_up(url: str, file: Path, *, force: bool = False) -> Kind:
    """Copy the database ``url`` names to ``file``, readable only by its owner."""
    database = Database.from_url(url)
    if file.exists() and not force:
        raise TrilhaError(f"{file} exists; pass --force to replace it")
    partial = file.with_name(f".{file.name}.partial")
    with _one_line_errors(database, file):
        partial.unlink(missing_ok=True)
        # Created before anything is written into it: a backup holds buyers' hashed data.
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            if database.kind is Kind.SQLITE:
                _sqlite_backup(database, partial)
            else:
                _pg_run("pg_dump", database, "--format=custom", f"--file={partial}")
            os.replace(partial, file)
        finally:
            partial.unlink(missing_ok=True)
    return database.kind


def restore(url: str, file: Path, *, force: bool = False) -> str:
    """Replace the contents of the database ``url`` names with the backup ``file``; the
    migration revision the backup was taken at (a known one: migrations then run forward)."""
    database = Database.from_url(url)
    kind = backup_kind(file)
    if kind is not database.kind:
        raise TrilhaError(
            f"{file} is a {kind} backup, but TRILHA_DATABASE_URL names a {database.kind} database"
        )
    revision = backup_revision(file, kind)
    known = {
        script.revision
        for script in ScriptDirectory.from_config(alembic_config(url)).walk_revisions()
    }
    if revision not in known:
        raise TrilhaError(
            f"{file} was taken at migration {revision}, which this trilha does not know; "
            "restore it with the trilha version that made it"
        )
    with _one_line_errors(database, file):
        if not force and holds_data(database):
            raise TrilhaError(f"{database} is not empty; pass --force to replace its contents")
        if kind is Kind.SQLITE:
            _sqlite_restore(file, database)
            return revision
    _pg_restore_replacing(database, file)
    return revision


def backup_kind(file: Path) -> Kind:
    try:
        with file.open("rb") as stream:
            header = stream.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise TrilhaError(f"no such file: {file}") from None
    except OSError as exc:
        raise TrilhaError(f"cannot read {file}: {exc.strerror}") from None
    if header.startswith(SQLITE_HEADER):
        return Kind.SQLITE
    if header.startswith(PG_DUMP_HEADER):
        return Kind.POSTGRESQL
    raise TrilhaError(f"{file} is not a trilha backup")


def backup_revision(file: Path, kind: Kind) -> str:
    """The migration revision stored in a backup; TrilhaError if it is not trilha's."""
    if kind is Kind.SQLITE:
        try:
            with closing(sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)) as conn:
                row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.Error:
            row = None
    else:
        # The table's data as SQL text (COPY ... FROM stdin; a line per row; \.), no server needed.
        listed = _run_tool(
            "pg_restore", ["--data-only", "--table=alembic_version", "--file=-", str(file)], {}
        )
        rows = re.search(r"^COPY [^\n]*alembic_version[^\n]*\n([^\n\\]+)\n", listed, re.MULTILINE)
        row = (rows.group(1).strip(),) if rows else None
    if row is None:
        raise TrilhaError(f"{file} is not a trilha backup")
    return str(row[0])


def holds_data(database: Database) -> bool:
    if database.kind is Kind.SQLITE and not database.path.exists():
        return False
    engine = create_engine(database.url)
    try:
        with engine.connect() as conn:
            present = set(inspect(conn).get_table_names())
            return any(
                conn.execute(text(f"SELECT 1 FROM {table} LIMIT 1")).first()  # noqa: S608 -- our names
                for table in DATA_TABLES
                if table in present
            )
    finally:
        engine.dispose()


def _sqlite_backup(database: Database, destination: Path) -> None:
    if not database.path.is_file():
        raise TrilhaError(f"no SQLite database at {database.path}")
    with (
        closing(_sqlite_connect(database.path)) as source,
        closing(sqlite3.connect(destination)) as copy,
    ):
        # One step: the whole copy reads one snapshot, and WAL lets the server write meanwhile.
        source.backup(copy)
        # The copy stands alone: one file, no -wal beside it.
        copy.execute("PRAGMA journal_mode=DELETE")
    backup_revision(destination, Kind.SQLITE)


def _sqlite_restore(file: Path, database: Database) -> None:
    with (
        closing(_sqlite_connect(file)) as source,
        closing(_sqlite_connect(database.path)) as target,
    ):
        source.backup(target)


@contextmanager
def _one_line_errors(database: Database, file: Path) -> Iterator[None]:
    """A file or database that fails → TrilhaError with one line, the password left out."""
    try:
        yield
    except OSError as exc:
        raise TrilhaError(f"{file}: {exc.strerror}") from None
    except sqlite3.Error as exc:
        raise TrilhaError(f"SQLite at {database.path}: {exc}") from None
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise TrilhaError(f"cannot reach {database}: {reason}") from None


def _sqlite_connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    return conn


def _pg_run(tool: str, database: Database, *args: str) -> None:
    _run_tool(tool, [*args], _pg_environment(database))


# pg_restore --clean drops each partition's primary key before the partitioned table's, which
# PostgreSQL refuses (the partition's belongs to the table's); the partitions go with the table.
_CONSTRAINT_DROP = re.compile(rb"ALTER TABLE IF EXISTS ONLY public\.(\w+) DROP CONSTRAINT ")


def _drops_a_partition_key(line: bytes) -> bool:
    found = _CONSTRAINT_DROP.match(line)
    return found is not None and is_partition(found[1].decode())


def _pg_restore_replacing(database: Database, file: Path) -> None:
    """pg_restore --clean's script, but for the drops above, run by psql in one transaction:
    the database's contents are the backup's, or, if anything fails, what they were."""
    restore_args = ["--clean", "--if-exists", "--no-owner", "--file=-", str(file)]
    psql_args = ["--single-transaction", "--no-psqlrc", "--quiet", "--set=ON_ERROR_STOP=1"]
    psql_args.append(f"--dbname={database.url.database}")
    env = _tool_environment(_pg_environment(database))
    with tempfile.TemporaryFile() as restore_errors, tempfile.TemporaryFile() as psql_errors:
        restore = subprocess.Popen(  # noqa: S603 -- our own arguments, no shell
            [_tool_path("pg_restore"), *restore_args],
            env=env, stdout=subprocess.PIPE, stderr=restore_errors,
        )  # fmt: skip
        psql = subprocess.Popen(  # noqa: S603 -- our own arguments, no shell
            [_tool_path("psql"), *psql_args],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=psql_errors,
        )  # fmt: skip
        script, into = restore.stdout, psql.stdin
        if script is None or into is None:  # pragma: no cover -- both are pipes
            raise TrilhaError("pg_restore or psql has no pipe")
        try:
            for line in script:
                if not _drops_a_partition_key(line):
                    into.write(line)
            into.close()
        except BrokenPipeError:
            pass  # psql stopped at an error: said below
        for tool, process, errors in (
            ("pg_restore", restore, restore_errors),
            ("psql", psql, psql_errors),
        ):
            if process.wait() != 0:
                errors.seek(0)
                said = errors.read().decode(errors="replace").splitlines()
                lines = [line for line in said if line.strip()]
                reason = next((ln for ln in lines if "ERROR" in ln), lines[-1] if lines else "")
                raise TrilhaError(f"{tool} failed: {reason or f'exit {process.returncode}'}")


def _pg_environment(database: Database) -> dict[str, str]:
    """libpq's variables for the database: the password goes there, never on a command line."""
    url = database.url
    values = {
        "PGHOST": url.host,
        "PGPORT": str(url.port) if url.port else None,
        "PGUSER": url.username,
        "PGPASSWORD": url.password if isinstance(url.password, str) else None,
        "PGDATABASE": url.database,
        "PGSSLMODE": url.query.get("sslmode"),
    }
    return {name: str(value) for name, value in values.items() if value}


def _tool_path(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise TrilhaError(
            f"{tool} not found on PATH; install PostgreSQL's client tools of the server's "
            "version (Debian: apt-get install postgresql-client-15)"
        )
    return path


def _tool_environment(environment: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")} | environment


def _run_tool(tool: str, args: list[str], environment: dict[str, str]) -> str:
    path = _tool_path(tool)
    env = _tool_environment(environment)
    done = subprocess.run(  # noqa: S603 -- our own arguments, no shell
        [path, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise TrilhaError(f"{tool} failed: {lines[-1] if lines else f'exit {done.returncode}'}")
    return done.stdout
