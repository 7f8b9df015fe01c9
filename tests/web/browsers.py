"""Dashboard forms posted as a browser would, each browser with a cookie jar of its own."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.accounts import User, find_session, start_session
from trilha.app import TrilhaApp
from trilha.web.auth import SESSION_COOKIE

CSRF = "a-browser-s-csrf-token"  # the double-submit token of the pages shown before sign-in


def browser(
    app: TrilhaApp, *, ip: str = "198.51.100.23", locale: str = "pt-BR"
) -> httpx.AsyncClient:
    """A client that holds the sign-in page's CSRF cookie, as a browser that opened it does."""
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, client=(ip, 50000)),
        base_url="http://testserver",
        headers={"accept-language": locale},
    )
    client.cookies.set("trilha_csrf", CSRF)
    return client


async def post_form(
    app: TrilhaApp,
    path: str,
    data: dict[str, str],
    *,
    ip: str = "198.51.100.23",
    locale: str = "pt-BR",
) -> httpx.Response:
    async with browser(app, ip=ip, locale=locale) as client:
        return await client.post(path, data={"csrf_token": CSRF, **data})


async def signed_in(app: TrilhaApp, db: AsyncEngine, user: User) -> tuple[httpx.AsyncClient, str]:
    """A browser with ``user``'s session cookie, and the CSRF token its forms carry."""
    async with db.begin() as conn:
        token = await start_session(conn, user, now=datetime.now(UTC))
        session = await find_session(conn, token, now=datetime.now(UTC))
    assert session is not None
    client = browser(app)
    client.cookies.set(SESSION_COOKIE, token)
    return client, session.csrf_token
