"""The edge in front of the API and the dashboard: body limits, text that is no text, and reads
that never wait for the write lock."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import Request
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, now
from tests.web.callers import Caller, make_owner
from tests.web.test_api_auth import session_of
from trilha.accounts import find_session, start_session
from trilha.app import TrilhaApp
from trilha.db.engine import is_sqlite
from trilha.db.schema import postback_log, traffic_sources
from trilha.web.auth import SESSION_COOKIE
from trilha.web.edge import ANONYMOUS_BODY_LIMIT
from trilha.web.limits import body_limit
from trilha.workspaces import Workspace

MIB = 1024 * 1024


async def session_cookie(db: AsyncEngine, caller: Caller) -> tuple[str, str]:
    """The caller signed in to the dashboard: (cookie header, CSRF token)."""
    async with db.begin() as conn:
        token = await start_session(conn, caller.user, now=now())
        session = await find_session(conn, token, now=now())
    assert session is not None
    return f"{SESSION_COOKIE}={token}", session.csrf_token


async def chunked(size: int) -> AsyncIterator[bytes]:
    """A body of ``size`` bytes sent in chunks, with no Content-Length."""
    for _ in range(size // 1024):
        yield b"a" * 1024


async def test_a_chunked_body_over_the_limit_is_cut_off_with_413(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    cookie, _ = await session_cookie(db, owner)

    api = await client.post(
        f"/api/v1/workspaces/{workspace.id}/sources",
        content=chunked(MIB + 1024),
        headers=owner.headers,
    )
    dashboard = await client.post(
        f"/w/{workspace.id}/settings", content=chunked(MIB + 1024), headers={"cookie": cookie}
    )
    login = await client.post("/login", content=chunked(ANONYMOUS_BODY_LIMIT + 1024))

    assert (api.status_code, dashboard.status_code, login.status_code) == (413, 413, 413)
    assert "larger than 1048576 bytes" in api.json()["detail"]
    assert "text/html" in dashboard.headers["content-type"]
    assert await fetch_all(db, traffic_sources) == []


async def test_a_route_may_declare_a_larger_body_limit(
    app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, _ = await make_owner(db)

    @app.web.post("/api/v1/uploads")
    @body_limit(3 * MIB)
    async def upload(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    fits = await client.post("/api/v1/uploads", content=b"a" * 2 * MIB, headers=owner.headers)
    over = await client.post("/api/v1/uploads", content=b"a" * 4 * MIB, headers=owner.headers)

    assert (fits.status_code, fits.json()) == (200, {"size": 2 * MIB})
    assert over.status_code == 413


async def api_answer(
    client: httpx.AsyncClient, owner: Caller, workspace: Workspace, where: str
) -> httpx.Response:
    sources = f"/api/v1/workspaces/{workspace.id}/sources"
    if where == "query":
        return await client.get(
            f"/api/v1/workspaces/{workspace.id}/postbacks?txid=T%00", headers=owner.headers
        )
    if where == "header":
        return await client.get("/api/v1/me", headers={**owner.headers, "x-note": "a\x00b"})
    if where == "path":
        return await client.get(
            f"/api/v1/workspaces/{workspace.id}%00/sources", headers=owner.headers
        )
    body = json.dumps({"name": "Face\x00book"})
    return await client.post(
        sources, content=body, headers={**owner.headers, "content-type": "application/json"}
    )


@pytest.mark.parametrize(
    ("where", "error"),
    [("query", "query"), ("header", "header x-note"), ("path", "path"), ("json", "body")],
)
async def test_a_nul_anywhere_in_an_api_request_answers_400_naming_where(
    client: httpx.AsyncClient, db: AsyncEngine, where: str, error: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await api_answer(client, owner, workspace, where)

    assert response.status_code == 400
    assert "NUL character" in response.json()["errors"][error]
    assert await fetch_all(db, traffic_sources) == []


@pytest.mark.parametrize(
    ("path", "content", "message"),
    [
        ("/w/{id}/sources?q=%00", b"", "NUL character"),
        ("/w/{id}/sources?q=caf%E9", b"", "not UTF-8"),
        ("/w/{id}/sources", b"name=Face%00book&csrf_token={csrf}", "NUL character"),
        ("/w/{id}/sources", b"name=Face%E9book&csrf_token={csrf}", "not UTF-8"),
    ],
)
async def test_a_dashboard_request_that_is_no_text_answers_400(
    client: httpx.AsyncClient, db: AsyncEngine, path: str, content: bytes, message: str
) -> None:
    owner, workspace = await make_owner(db)
    cookie, csrf = await session_cookie(db, owner)
    url = path.format(id=workspace.id)
    headers = {"cookie": cookie, "content-type": "application/x-www-form-urlencoded"}

    if content:
        body = content.replace(b"{csrf}", csrf.encode())
        response = await client.post(url, content=body, headers=headers)
    else:
        response = await client.get(url, headers=headers)

    assert response.status_code == 400
    assert message in response.text
    assert await fetch_all(db, traffic_sources) == []


@pytest.mark.parametrize(
    ("query", "content", "content_type"),
    [
        ("&txid=T%00", b"", ""),
        ("", b"txid=T%001&click_id=abc", "application/x-www-form-urlencoded"),
        ("", b"txid=T\x001&click_id=abc", "application/x-www-form-urlencoded"),
        ("", b'{"txid": "T\\u00001", "click_id": "abc"}', "application/json"),
        (
            "",
            b'--b\r\nContent-Disposition: form-data; name="txid"\r\n\r\nT\x001\r\n--b--\r\n',
            "multipart/form-data; boundary=b",
        ),
    ],
)
async def test_a_postback_with_a_nul_is_logged_invalid_with_400(
    client: httpx.AsyncClient, db: AsyncEngine, query: str, content: bytes, content_type: str
) -> None:
    _, workspace = await make_owner(db)
    url = f"/postback?token={workspace.postback_token}{query}"

    response = await client.post(url, content=content, headers={"content-type": content_type})

    assert response.status_code == 400
    assert response.json()["status"] == "invalid"
    assert "NUL" in response.json()["reason"]
    [entry] = await fetch_all(db, postback_log)
    assert entry["outcome"] == "invalid"
    assert "NUL" in entry["reason"]
    assert "\x00" not in entry["body"]


@asynccontextmanager
async def write_lock_held(db: AsyncEngine) -> AsyncIterator[None]:
    """Another connection holds the write lock (SQLite), or every write to the tables a
    request's caller is found in (PostgreSQL)."""
    async with db.begin() as conn:
        if not is_sqlite(db):
            await conn.execute(text("LOCK TABLE api_keys, sessions, users IN EXCLUSIVE MODE"))
        yield


async def test_reads_are_served_while_a_writer_holds_the_lock(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, _ = await make_owner(db)
    cookie, _ = await session_of(db)
    await client.get("/api/v1/me", headers=owner.headers)  # the key's use is recorded

    async with write_lock_held(db):
        with_key = await asyncio.wait_for(client.get("/api/v1/me", headers=owner.headers), 15)
        with_session = await asyncio.wait_for(
            client.get("/api/v1/workspaces", headers={"cookie": cookie}), 15
        )
        page = await asyncio.wait_for(client.get("/login", headers={"cookie": cookie}), 15)

    assert (with_key.status_code, with_session.status_code, page.status_code) == (200, 200, 303)
