"""Who may call the API: an API key as Bearer, or a dashboard session that sends its CSRF token."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_user, now
from tests.web.callers import bearer, make_caller
from trilha.accounts import find_session, start_session
from trilha.db.schema import api_keys, workspaces
from trilha.web.auth import CSRF_HEADER, SESSION_COOKIE


async def session_of(db: AsyncEngine) -> tuple[str, str]:
    """A signed-in dashboard session: (cookie header, CSRF token)."""
    user = await make_user(db)
    async with db.begin() as conn:
        token = await start_session(conn, user, now=now())
        session = await find_session(conn, token, now=now())
    assert session is not None
    return f"{SESSION_COOKIE}={token}", session.csrf_token


async def test_it_answers_401_without_an_api_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/me")

    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in response.json()["detail"]


async def test_it_answers_401_for_an_unknown_api_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/me", headers=bearer("trk_not-a-real-key"))

    assert response.status_code == 401
    assert response.json() == {"detail": "invalid or revoked API key"}


async def test_it_answers_401_for_a_revoked_api_key(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    [key] = await fetch_all(db, api_keys, user_id=caller.user.id)
    revoked = await client.delete(f"/api/v1/api-keys/{key['id']}", headers=caller.headers)

    response = await client.get("/api/v1/me", headers=caller.headers)

    assert revoked.status_code == 204
    assert response.status_code == 401
    [stored] = await fetch_all(db, api_keys, user_id=caller.user.id)
    assert stored["revoked_at"] is not None


async def test_it_records_when_a_key_was_last_used(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)

    response = await client.get("/api/v1/me", headers=caller.headers)

    assert response.status_code == 200
    [stored] = await fetch_all(db, api_keys, user_id=caller.user.id)
    assert stored["last_used_at"] is not None


async def test_it_accepts_a_session_cookie_for_reading(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    cookie, _ = await session_of(db)

    response = await client.get("/api/v1/workspaces", headers={"cookie": cookie})

    assert response.status_code == 200
    assert response.json() == []


async def test_it_refuses_a_change_by_session_cookie_without_the_csrf_token(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    cookie, _ = await session_of(db)

    response = await client.post(
        "/api/v1/workspaces", json={"name": "Forged"}, headers={"cookie": cookie}
    )

    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    assert await fetch_all(db, workspaces) == []


async def test_it_refuses_a_change_by_session_cookie_with_a_wrong_csrf_token(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    cookie, _ = await session_of(db)

    response = await client.post(
        "/api/v1/workspaces",
        json={"name": "Forged"},
        headers={"cookie": cookie, CSRF_HEADER: "guessed"},
    )

    assert response.status_code == 403
    assert await fetch_all(db, workspaces) == []


async def test_it_accepts_a_change_by_session_cookie_with_its_csrf_token(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    cookie, csrf = await session_of(db)

    response = await client.post(
        "/api/v1/workspaces",
        json={"name": "From the dashboard"},
        headers={"cookie": cookie, CSRF_HEADER: csrf},
    )

    assert response.status_code == 201
    assert [w["name"] for w in await fetch_all(db, workspaces)] == ["From the dashboard"]


async def test_it_checks_the_key_before_the_body(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    response = await client.post("/api/v1/workspaces", json={"nonsense": True})

    assert response.status_code == 401
    assert await fetch_all(db, workspaces) == []
