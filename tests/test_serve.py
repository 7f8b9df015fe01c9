"""`trilha serve` as a real server process: setup link, and clicks that survive a kill."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import Template, fresh_database
from tests.factories import fetch_clicks, make_campaign, make_workspace

STARTUP_TIMEOUT = 20.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def trilha_serve(
    database_url: str, cwd: Path, **settings: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The server on a free port; ``settings`` are more TRILHA_* values, by lower-case name."""
    port = free_port()
    env = {**os.environ, "TRILHA_DATABASE_URL": database_url, "TRILHA_PORT": str(port)}
    env.update({f"TRILHA_{name.upper()}": value for name, value in settings.items()})
    process = subprocess.Popen(
        [sys.executable, "-m", "trilha", "serve"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                if httpx.get(f"{base}/api/v1/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, "trilha serve exited early"
            assert time.monotonic() < deadline, "trilha serve did not start"
            time.sleep(0.1)
        yield base, process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        assert process.stdout is not None
        process.stdout.close()


async def test_a_click_survives_a_server_kill_right_after_its_302(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://o.example.com/?c={click_id}")

    with trilha_serve(database_url, tmp_path) as (base, process):
        response = httpx.get(f"{base}/r/lp", follow_redirects=False)
        os.killpg(process.pid, signal.SIGKILL)

    assert response.status_code == 302
    [row] = await fetch_clicks(db)
    assert response.headers["location"] == f"https://o.example.com/?c={row['id']}"


@pytest.fixture(scope="module")
def first_start(
    tmp_path_factory: pytest.TempPathFactory, database_template: Template
) -> tuple[str, str]:
    """The address and the whole output of a server's first start, stopped by SIGTERM: one
    start (seconds of a process's imports and migration check) read by each test below."""
    directory = tmp_path_factory.mktemp("first-start")
    with (
        fresh_database(directory, database_template) as database_url,
        trilha_serve(database_url, directory) as (base, process),
    ):
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=10)
    return base, output


async def test_first_start_prints_a_one_time_setup_link(first_start: tuple[str, str]) -> None:
    base, output = first_start

    assert f"{base}/setup/" in output


async def test_the_server_runs_on_uvloop(first_start: tuple[str, str]) -> None:
    _, output = first_start

    assert "database, uvloop event loop" in output
