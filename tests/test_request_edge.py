"""Request bodies at a real server's edge: slow, stalled, huge, anonymous and abandoned bodies
never hold the database, nor wait to be refused, nor leave a traceback."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_api_key, make_campaign, make_user, make_workspace, now
from tests.test_serve import trilha_serve
from tests.web.callers import bearer
from trilha.accounts import start_session
from trilha.db.schema import postback_log
from trilha.web.auth import SESSION_COOKIE
from trilha.workspaces import Workspace

ANSWER_TIMEOUT = 15.0  # longer than SQLite's busy timeout, so a request stuck behind it fails
FORM = {"content-type": "application/x-www-form-urlencoded"}
HUGE = str(200 * 1024 * 1024)


@contextmanager
def request_head(base: str, path: str, headers: dict[str, str]) -> Iterator[socket.socket]:
    """A connection that has sent a POST's request line and headers, and no body yet."""
    url = urlsplit(base)
    assert url.hostname is not None
    assert url.port is not None
    with socket.create_connection((url.hostname, url.port), timeout=ANSWER_TIMEOUT) as sock:
        lines = [f"POST {path} HTTP/1.1", f"Host: {url.netloc}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        yield sock


def answer_status(sock: socket.socket) -> int:
    received = b""
    while b"\r\n" not in received:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the connection without an answer"
        received += chunk
    return int(received.split(b" ", 2)[1])


def status_of_head(base: str, path: str, headers: dict[str, str]) -> int:
    """The answer to a request whose body is announced but never sent."""
    with request_head(base, path, headers) as sock:
        return answer_status(sock)


@contextmanager
def slow_uploads(base: str, count: int, path: str, headers: dict[str, str]) -> Iterator[None]:
    """``count`` form POSTs whose bodies arrive a byte every half second."""
    head = {**headers, **FORM, "content-length": "1000"}
    with ExitStack() as stack:
        sockets = [stack.enter_context(request_head(base, path, head)) for _ in range(count)]
        stop = threading.Event()

        def trickle() -> None:
            while not stop.wait(0.5):
                for sock in sockets:
                    with suppress(OSError):  # answered (408) and closed: nothing to trickle
                        sock.send(b"a")

        thread = threading.Thread(target=trickle)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()


async def owner_with_key_and_session(db: AsyncEngine) -> tuple[Workspace, str, str]:
    """A workspace, its owner's API key, and the owner's session cookie header."""
    user = await make_user(db)
    workspace = await make_workspace(db, owner=user)
    secret = await make_api_key(db, user)
    async with db.begin() as conn:
        token = await start_session(conn, user, now=now())
    return workspace, secret, f"{SESSION_COOKIE}={token}"


async def test_clicks_and_reads_are_served_while_more_slow_uploads_than_connections_trickle(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace, secret, _ = await owner_with_key_and_session(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://o.example.com/")

    postback = f"/postback?token={workspace.postback_token}"
    with (
        trilha_serve(database_url, tmp_path) as (base, _),
        slow_uploads(base, 25, "/login", {}),
        slow_uploads(base, 5, postback, {}),
    ):
        time.sleep(1)  # every upload has begun
        clicks = [httpx.get(f"{base}/r/lp", timeout=ANSWER_TIMEOUT) for _ in range(3)]
        me = httpx.get(f"{base}/api/v1/me", headers=bearer(secret), timeout=ANSWER_TIMEOUT)

    assert [click.status_code for click in clicks] == [302, 302, 302]
    assert me.status_code == 200


async def test_a_body_that_stalls_is_dropped_with_408(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace, secret, _ = await owner_with_key_and_session(db)
    targets = {
        "api": (f"/api/v1/workspaces/{workspace.id}/sources", bearer(secret)),
        "login": ("/login", FORM),
        "postback": (f"/postback?token={workspace.postback_token}", FORM),
    }

    with (
        trilha_serve(database_url, tmp_path, request_body_timeout="1") as (base, _),
        ExitStack() as stack,
    ):
        stalled = {}  # all stalled at once: each waits out the same second
        for name, (path, headers) in targets.items():
            sock = stack.enter_context(
                request_head(base, path, {**headers, "content-length": "100"})
            )
            sock.sendall(b"x" * 10)
            stalled[name] = sock
        statuses = {name: answer_status(sock) for name, sock in stalled.items()}

    assert statuses == {"api": 408, "login": 408, "postback": 408}
    assert await fetch_all(db, postback_log) == []


async def test_a_body_declared_over_the_limit_is_refused_before_it_is_sent(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace, secret, cookie = await owner_with_key_and_session(db)
    targets = {
        "api": (f"/api/v1/workspaces/{workspace.id}/sources", bearer(secret)),
        "dashboard": (f"/w/{workspace.id}/settings", {**FORM, "cookie": cookie}),
        "login": ("/login", FORM),
        "postback": (f"/postback?token={workspace.postback_token}", FORM),
    }

    with trilha_serve(database_url, tmp_path) as (base, _):
        statuses = {
            name: status_of_head(base, path, {**headers, "content-length": HUGE})
            for name, (path, headers) in targets.items()
        }

    assert statuses == {"api": 413, "dashboard": 413, "login": 413, "postback": 413}
    [entry] = await fetch_all(db, postback_log)
    assert (entry["outcome"], entry["body"], entry["body_truncated"]) == ("invalid", "", True)
    assert "larger than" in entry["reason"]


async def test_a_body_without_a_valid_caller_is_refused_before_it_is_read(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace, _, _ = await owner_with_key_and_session(db)
    sources = f"/api/v1/workspaces/{workspace.id}/sources"
    length = {"content-length": "500000"}  # within the limit: only the caller is wrong

    with trilha_serve(database_url, tmp_path) as (base, _):
        anonymous = status_of_head(base, sources, length)
        wrong_key = status_of_head(base, sources, {**length, **bearer("trk_guess")})
        wrong_session = status_of_head(base, sources, {**length, "cookie": "trilha_session=x"})
        dashboard = status_of_head(base, f"/w/{workspace.id}/settings", {**length, **FORM})

    assert (anonymous, wrong_key, wrong_session) == (401, 401, 401)
    assert dashboard == 303  # to the sign-in page


async def test_a_client_that_hangs_up_leaves_no_traceback_in_the_log(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace, secret, _ = await owner_with_key_and_session(db)
    targets = [
        (f"/api/v1/workspaces/{workspace.id}/sources", bearer(secret)),
        ("/login", FORM),
        (f"/postback?token={workspace.postback_token}", FORM),
    ]

    with trilha_serve(database_url, tmp_path) as (base, process):
        for path, headers in targets:
            with request_head(base, path, {**headers, "content-length": "100"}) as sock:
                sock.sendall(b"x" * 10)  # and hangs up mid-body
            with request_head(base, path, {**headers, "content-length": "2"}) as sock:
                sock.sendall(b"{}")  # and hangs up before the answer
        time.sleep(1)  # the server has seen every hang-up
        still_serving = httpx.get(f"{base}/api/v1/health").status_code
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=10)

    assert still_serving == 200
    assert "Traceback" not in output
    assert "ERROR" not in output
