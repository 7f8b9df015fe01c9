"""Who is asking: an API key (`Authorization: Bearer`) or a dashboard session cookie; and the
request's transaction.

Cookie-authenticated requests that change something must carry the session's CSRF token, in the
`X-CSRF-Token` header (htmx, fetch) or a `csrf_token` form field (plain forms).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.accounts import (
    KeyHolder,
    Session,
    User,
    find_api_key,
    find_session,
    record_api_key_use,
)
from trilha.db.engine import truncate_wal
from trilha.errors import NotAuthenticated, PermissionDenied
from trilha.reports.limits import ReportLimiter
from trilha.runtime import Runtime

SESSION_COOKIE = "trilha_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

log = logging.getLogger(__name__)


def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def db(request: Request) -> AsyncIterator[AsyncConnection]:
    """One transaction per request, committed when the handler returns without raising.

    The request's whole body is in memory by then (trilha.web.edge), so no transaction waits on
    a slow client. A GET or HEAD only reads: on SQLite its transaction takes no write lock.
    """
    runtime = runtime_of(request)
    engine = runtime.read_engine if request.method in SAFE_METHODS else runtime.engine
    async with engine.begin() as conn:
        yield conn


# scope="function": commit before the response is sent, so a client never reads stale data.
Db = Annotated[AsyncConnection, Depends(db, scope="function")]


def report_limiter(request: Request) -> ReportLimiter:
    return runtime_of(request).reports


# Every report runs through it: ``await reports.run(conn, workspace_id, run_report, ...)``.
Reports = Annotated[ReportLimiter, Depends(report_limiter)]


async def wal_truncated(request: Request) -> AsyncIterator[None]:
    """After the request's transaction has committed, on SQLite, the WAL copied into the
    database file and truncated: what the request erased survives in neither.

    Dependencies end in the reverse of their order, so a handler names this one before ``Db``.
    """
    yield
    if not await truncate_wal(runtime_of(request).engine):
        log.warning(
            "the WAL could not be truncated (a read held it): it keeps what the request erased"
            " until overwritten; forgetting the buyer again truncates it"
        )


WalTruncated = Annotated[None, Depends(wal_truncated, scope="function")]


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


def bearer_secret(request: Request) -> str | None:
    scheme, _, secret = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        return None
    return secret.strip() or None


async def verify_caller(request: Request, conn: AsyncConnection, *, api: bool) -> None:
    """NotAuthenticated unless the request carries a live API key (``api`` only) or session:
    the check made before a body is read (it only reads)."""
    secret = bearer_secret(request) if api else None
    if secret is not None:
        if await find_api_key(conn, secret) is None:
            raise NotAuthenticated("invalid or revoked API key")
    elif await current_session(request, conn) is None:
        raise NotAuthenticated("send an API key as `Authorization: Bearer <key>`")


async def api_user(request: Request, conn: Db) -> User:
    """The API caller: a Bearer API key, or a dashboard session with its CSRF header."""
    secret = bearer_secret(request)
    if secret is not None:
        holder = await find_api_key(conn, secret)
        if holder is None:
            raise NotAuthenticated("invalid or revoked API key")
        await _record_key_use(request, conn, holder)
        return holder.user
    session = await current_session(request, conn)
    if session is None:
        raise NotAuthenticated("send an API key as `Authorization: Bearer <key>`")
    check_csrf(request, session)
    return session.user


async def _record_key_use(request: Request, conn: AsyncConnection, holder: KeyHolder) -> None:
    """In the request's transaction when it writes anyway; a request that only reads records it
    in a short write of its own, and only when due, so reads seldom wait for the write lock."""
    now = datetime.now(UTC)
    if not holder.is_use_due(now):
        return
    if request.method not in SAFE_METHODS:
        await record_api_key_use(conn, holder.key_id, now=now)
        return
    async with runtime_of(request).engine.begin() as write:
        await record_api_key_use(write, holder.key_id, now=now)


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
