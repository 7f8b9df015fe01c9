"""Sign-in, sign-out, the first owner's one-time setup link, and the language switch."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from trilha import accounts
from trilha.accounts import NewSession
from trilha.errors import Conflict, InvalidInput, TooManyRequests
from trilha.login_limits import LoginLimits
from trilha.metrics import LOGIN_REFUSALS, LoginRefusal
from trilha.settings import Settings
from trilha.setup_link import set_up_owner
from trilha.visitors import client_ip
from trilha.web.auth import (
    SESSION_COOKIE,
    Db,
    clear_session_cookie,
    runtime_of,
    set_session_cookie,
)
from trilha.web.dashboard.pages import (
    Anonymous,
    Anyone,
    Page,
    SignedIn,
    field_errors,
    local_path,
    read_form,
)
from trilha.web.dashboard.responses import DashboardRoute, redirect, render, set_language_cookie

router = APIRouter(route_class=DashboardRoute)

SETUP_FIELDS = ("email", "user_name", "password", "name")


@router.get("/login")
async def login_page(
    page: Anonymous, next_url: Annotated[str, Query(alias="next")] = "/"
) -> Response:
    if page.session is not None:
        return redirect(page, local_path(next_url))
    return render(page, "dashboard/auth/login.html", {"next": local_path(next_url), "email": ""})


@router.post("/login")
async def login(page: Anonymous) -> Response:
    form = await read_form(page.request)
    runtime = runtime_of(page.request)
    context: dict[str, object] = {"next": local_path(form["next"]), "email": form["email"]}
    try:
        session = await accounts.sign_in(
            runtime.engine,
            LoginLimits.of(runtime.settings),
            email=form["email"],
            password=form["password"],
            client_ip=_client_ip(page.request, runtime.settings),
            now=datetime.now(UTC),
        )
    except TooManyRequests as exc:
        LOGIN_REFUSALS[LoginRefusal.LIMIT].inc()
        context |= {"wait_minutes": math.ceil(exc.retry_after / 60)}
        response = render(page, "dashboard/auth/login.html", context, status_code=429)
        response.headers["retry-after"] = str(exc.retry_after)
        return response
    if session is None:
        LOGIN_REFUSALS[LoginRefusal.CREDENTIALS].inc()
        context |= {"failed": True}
        return render(page, "dashboard/auth/login.html", context, status_code=401)
    return _with_session(page, session, local_path(form["next"]))


@router.post("/logout")
async def logout(page: SignedIn, conn: Db) -> Response:
    await accounts.end_session(conn, page.request.cookies.get(SESSION_COOKIE, ""))
    response = redirect(page, "/login", "auth.signed_out")
    clear_session_cookie(response)
    return response


@router.get("/setup/{token}")
async def setup_page(token: str, page: Anonymous) -> Response:
    async with runtime_of(page.request).read_engine.connect() as conn:
        is_valid = await accounts.is_setup_token_valid(conn, token)
    if not is_valid:
        return render(page, "dashboard/auth/setup_invalid.html", {}, status_code=404)
    return render(page, "dashboard/auth/setup.html", {"values": {}, "errors": {}})


@router.post("/setup/{token}")
async def setup(token: str, page: Anonymous) -> Response:
    """Spend the link, create the owner and their first workspace, and sign them in."""
    form = await read_form(page.request)
    try:
        owner = await set_up_owner(
            runtime_of(page.request).engine,
            token,
            email=form["email"],
            password=form["password"],
            user_name=form["user_name"],
            workspace_name=form["name"],
            locale=page.t.locale,
            now=datetime.now(UTC),
        )
    except (InvalidInput, Conflict) as exc:
        values = {name: form[name] for name in SETUP_FIELDS if name != "password"}
        context = {"values": values, "errors": field_errors(exc)}
        return render(page, "dashboard/auth/setup.html", context, status_code=422)
    if owner is None:
        return render(page, "dashboard/auth/setup_invalid.html", {}, status_code=404)
    url = f"/w/{owner.workspace.id}/campaigns"
    return _with_session(page, owner.session, url, "auth.welcome")


@router.post("/language")
async def switch_language(page: Anyone, conn: Db) -> Response:
    form = await read_form(page.request)
    locale = form["locale"] if form["locale"] in accounts.LOCALES else "pt-BR"
    if page.session is not None:
        await accounts.update_user(conn, page.user, locale=locale)
    response = redirect(page, local_path(form["next"]))
    set_language_cookie(page, response, locale)
    return response


def _with_session(page: Page, session: NewSession, url: str, flash: str | None = None) -> Response:
    response = redirect(page, url, flash)
    set_session_cookie(response, session.token, secure=page.settings.is_secure)
    set_language_cookie(page, response, session.user.locale)
    return response


def _client_ip(request: Request, settings: Settings) -> str:
    """The address sign-ins are limited by, read as the redirect reads a visitor's."""
    peer = request.client.host if request.client else "0.0.0.0"  # noqa: S104 -- unknown peer
    return client_ip(peer, request.headers.get("x-forwarded-for"), settings.trusted_proxies)
