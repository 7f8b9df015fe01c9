"""Who is asking: an API key (`Authorization: Bearer`) or a dashboard session cookie.

Cookie-authenticated requests that change something must carry the session's CSRF token, in the
`X-CSRF-Token` header (htmx, fetch) or a `csrf_token` form field (plain forms).
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.accounts import Session, User, find_api_key_user, find_session
from trilha.errors import NotAuthenticated, PermissionDenied
from trilha.runtime import Runtime

SESSION_COOKIE = "trilha_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def db(request: Request) -> AsyncIterator[AsyncConnection]:
    """One transaction per request, committed when the handler returns without raising."""
    async with runtime_of(request).engine.begin() as conn:
        yield conn


# scope="function": commit before the response is sent, so a client never reads stale data.
Db = Annotated[AsyncConnection, Depends(db, scope="function")]


async def current_session(request: Request, conn: AsyncConnection) -> Session | None:
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    return await find_session(conn, token, now=datetime.now(UTC))


def check_csrf(request: Request, session: Session, form_token: str | None = None) -> None:
    if request.method in SAFE_METHODS:
        return
    sent = request.headers.get(CSRF_HEADER) or form_token or ""
    if not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
        raise PermissionDenied("missing or wrong CSRF token; reload the page and try again")


async def api_user(request: Request, conn: Db) -> User:
    """The API caller: a Bearer API key, or a dashboard session with its CSRF header."""
    authorization = request.headers.get("authorization", "")
    scheme, _, secret = authorization.partition(" ")
    if scheme.lower() == "bearer" and secret.strip():
        user = await find_api_key_user(conn, secret.strip(), now=datetime.now(UTC))
        if user is None:
            raise NotAuthenticated("invalid or revoked API key")
        return user
    session = await current_session(request, conn)
    if session is None:
        raise NotAuthenticated("send an API key as `Authorization: Bearer <key>`")
    check_csrf(request, session)
    return session.user


ApiUser = Annotated[User, Depends(api_user)]


def set_session_cookie(response: Response, token: str, *, secure: bool) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        httponly=True,
        secure=secure,
        samesite="lax",
        max_age=14 * 24 * 3600,
        path="/",
    )


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/")
