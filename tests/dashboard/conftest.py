"""Fixtures for browser tests: the app served by uvicorn on a free local port, with a database of
its own per test, and Debian's Chromium driven by Playwright.

One Chromium serves the whole run (starting it takes about a second); each test gets a fresh
browser context, so no cookie or page outlives it. Browser tests therefore run in the session's
event loop: their modules set ``pytestmark = BROWSER``, and the async fixtures they use here
(including ``db``, redefined for that) live in the same loop.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
import pytest_asyncio
import uvicorn
from playwright.async_api import Browser, BrowserContext, Page, async_playwright
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_user, make_workspace
from trilha.accounts import User, start_session
from trilha.app import create_app
from trilha.db.engine import make_engine
from trilha.settings import Settings
from trilha.web.auth import SESSION_COOKIE
from trilha.workspaces import Role, Workspace, add_member

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Screenshots go here; set TRILHA_SCREENSHOTS=/tmp to keep them after the run.
SCREENSHOTS = os.environ.get("TRILHA_SCREENSHOTS")
BROWSER = pytest.mark.asyncio(loop_scope="session")
in_session_loop = pytest_asyncio.fixture(loop_scope="session")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def live_settings(settings: Settings) -> Settings:
    """The test's settings, with the public URL the live server answers on."""
    port = _free_port()
    return settings.model_copy(update={"public_url": f"http://127.0.0.1:{port}", "port": port})


@pytest.fixture
def live_server(live_settings: Settings) -> Iterator[str]:
    """The whole app under uvicorn in a thread; yields its base URL."""
    config = uvicorn.Config(
        create_app(live_settings),
        host="127.0.0.1",
        port=live_settings.port,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        if not thread.is_alive():
            raise RuntimeError("the live server did not start")
        threading.Event().wait(0.01)
    yield live_settings.base_url
    server.should_exit = True
    thread.join(timeout=10)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        await browser.close()


@in_session_loop
async def db(database_url: str) -> AsyncIterator[AsyncEngine]:
    """The engine of tests/conftest.py, made in the loop the browser tests run in."""
    engine = make_engine(database_url)
    yield engine
    await engine.dispose()


@in_session_loop
async def context(browser: Browser, live_server: str) -> AsyncIterator[BrowserContext]:
    context = await browser.new_context(
        base_url=live_server, locale="pt-BR", viewport={"width": 1360, "height": 900}
    )
    yield context
    await context.close()


@in_session_loop
async def english_context(browser: Browser, live_server: str) -> AsyncIterator[BrowserContext]:
    """A browser whose Accept-Language asks for English."""
    context = await browser.new_context(base_url=live_server, locale="en-US")
    yield context
    await context.close()


@in_session_loop
async def page(context: BrowserContext) -> Page:
    return await context.new_page()


@dataclass(frozen=True, slots=True)
class Account:
    user: User
    workspace: Workspace


async def sign_in(db: AsyncEngine, context: BrowserContext, user: User, base_url: str) -> str:
    """Give the browser a session cookie, as signing in through the form would; returns it."""
    async with db.begin() as conn:
        token = await start_session(conn, user, now=datetime.now(UTC))
    await context.add_cookies([{"name": SESSION_COOKIE, "value": token, "url": base_url}])
    return token


@in_session_loop
async def owner(db: AsyncEngine, context: BrowserContext, live_server: str) -> Account:
    """A signed-in owner of a workspace."""
    user = await make_user(db, email="dona@example.com")
    workspace = await make_workspace(db, owner=user, name="Loja da Ana")
    await sign_in(db, context, user, live_server)
    return Account(user, workspace)


async def add_to_workspace(db: AsyncEngine, workspace: Workspace, user: User, role: Role) -> None:
    async with db.begin() as conn:
        await add_member(conn, workspace, user, role=role, now=datetime.now(UTC))


async def screenshot(page: Page, name: str, tmp_path: Path) -> Path:
    path = Path(SCREENSHOTS or tmp_path) / name
    await page.screenshot(path=str(path), full_page=True)
    return path
