"""Fixtures: a fresh database per test (SQLite file, or PostgreSQL when TRILHA_TEST_DATABASE_URL
is set), the app running on it, an HTTP client speaking to the app, and a connection to arrange
and inspect rows."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import uuid4

import httpx
import psycopg
import pytest
from argon2 import PasswordHasher, profiles
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dns_server import DnsServer
from trilha import passwords
from trilha.app import TrilhaApp, create_app
from trilha.db.engine import make_engine
from trilha.db.migrate import migrate
from trilha.settings import Settings

POSTGRES_URL = os.environ.get("TRILHA_TEST_DATABASE_URL")
TEMPLATE_DB = f"trilha_test_template_{os.getpid()}"  # one per test run: runs may overlap


def _admin(url: str) -> psycopg.Connection[tuple[object, ...]]:
    parsed = make_url(url)
    return psycopg.connect(
        host=parsed.host,
        port=parsed.port or 5432,
        user=parsed.username,
        password=parsed.password,
        dbname=parsed.database,
        autocommit=True,
    )


class Template:
    """The database migrated once per run, which each test copies: a SQLite file, or a
    PostgreSQL database whose copies a thread makes one ahead of the test that takes it and
    drops once used (a copy costs ~0.1 s, a drop as much), so a test waits for neither."""

    def __init__(self, location: str) -> None:
        self.location = location  # the file's path, or the PostgreSQL database's name
        self._ready: queue.Queue[str | BaseException] = queue.Queue(maxsize=1)
        self._used: queue.Queue[str | None] = queue.Queue()
        self._closing = threading.Event()
        self._threads = [
            threading.Thread(target=self._make_copies, daemon=True),
            threading.Thread(target=self._drop_used, daemon=True),
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    @contextmanager
    def copy(self, directory: Path) -> Iterator[str]:
        """A migrated database of its own: a SQLite file in ``directory``, or a PostgreSQL
        database, dropped afterwards."""
        if POSTGRES_URL is None:
            path = directory / "trilha.db"
            shutil.copyfile(self.location, path)
            yield f"sqlite+aiosqlite:///{path}"
            return
        name = self._ready.get()
        if isinstance(name, BaseException):
            raise name
        try:
            yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
        finally:
            self._used.put(name)

    def close(self) -> None:
        """Stop making copies and drop those made but never taken."""
        self._closing.set()
        maker, dropper = self._threads
        while maker.is_alive() or not self._ready.empty():
            with contextlib.suppress(queue.Empty):
                made = self._ready.get(timeout=0.1)  # frees the maker, waiting to hand it over
                if isinstance(made, str):
                    self._used.put(made)
        self._used.put(None)
        dropper.join()

    def _make_copies(self) -> None:
        assert POSTGRES_URL is not None
        with _admin(POSTGRES_URL) as admin:
            while not self._closing.is_set():
                name = f"trilha_test_{uuid4().hex[:12]}"
                try:
                    admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.location}"')
                except psycopg.Error as error:
                    self._ready.put(error)
                    return
                self._ready.put(name)

    def _drop_used(self) -> None:
        assert POSTGRES_URL is not None
        with _admin(POSTGRES_URL) as admin:
            while (name := self._used.get()) is not None:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def database_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Template]:
    """The database migrated once, each test getting a copy of it (migrating takes far longer
    than copying)."""
    if POSTGRES_URL is None:
        path = tmp_path_factory.mktemp("template") / "trilha.db"
        migrate(f"sqlite+aiosqlite:///{path}")
        with sqlite3.connect(path) as conn:  # everything in the file itself, none in a WAL
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        yield Template(str(path))
        return
    with _admin(POSTGRES_URL) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{TEMPLATE_DB}"')
    template_url = make_url(POSTGRES_URL).set(database=TEMPLATE_DB)
    migrate(template_url.render_as_string(hide_password=False))
    template = Template(TEMPLATE_DB)
    template.start()
    yield template
    template.close()
    with _admin(POSTGRES_URL) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}" WITH (FORCE)')


@contextmanager
def fresh_database(directory: Path, database_template: Template) -> Iterator[str]:
    """A migrated database of its own, copied from the template: a SQLite file in
    ``directory``, or a PostgreSQL database, dropped afterwards."""
    with database_template.copy(directory) as url:
        yield url


@contextmanager
def empty_database(directory: Path) -> Iterator[str]:
    """A database of its own with no tables yet: a SQLite file in ``directory`` (created on
    first use), or a PostgreSQL database, dropped afterwards."""
    if POSTGRES_URL is None:
        yield f"sqlite+aiosqlite:///{directory / 'trilha.db'}"
        return
    name = f"trilha_test_{uuid4().hex[:12]}"
    with _admin(POSTGRES_URL) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    with _admin(POSTGRES_URL) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(autouse=True)
def cheap_password_hashes() -> Iterator[None]:
    """argon2 with its test profile: the production parameters take ~0.2 s of CPU a hash, and
    most tests make a user (tests/factories.py) or sign one in. The code path stays the same;
    tests/test_passwords.py keeps the real parameters and checks them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "_hasher", PasswordHasher.from_parameters(profiles.CHEAPEST))
        yield


@pytest.fixture(scope="session")
def dns_server() -> Iterator[DnsServer]:
    """The DNS server every test's settings point custom-domain checks to."""
    server = DnsServer()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def dns_records(dns_server: DnsServer) -> Iterator[DnsServer]:
    """The DNS server, empty at the start of each test."""
    dns_server.reset()
    yield dns_server
    dns_server.reset()


@pytest.fixture
def database_url(tmp_path: Path, database_template: Template) -> Iterator[str]:
    with fresh_database(tmp_path, database_template) as url:
        yield url


def settings_for(database_url: str, dns_server: DnsServer) -> Settings:
    """The app's settings on ``database_url``, its custom-domain checks asking the local DNS
    server."""
    return Settings(
        database_url=database_url,
        public_url="http://testserver",
        dns_nameserver="127.0.0.1",
        dns_port=dns_server.port,
        _env_file=None,
    )


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return settings_for(database_url, dns_server)


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[TrilhaApp]:
    application = create_app(settings)
    application.runtime.start()
    yield application
    await application.runtime.stop()


@pytest.fixture
async def client(app: TrilhaApp) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=("198.51.100.23", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine of the test's own, to arrange rows and read what the app wrote."""
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()
