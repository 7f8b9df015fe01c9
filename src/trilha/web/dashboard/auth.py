"""Sign-in, sign-out, the first owner's one-time setup link, and the language switch."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha import accounts
from trilha.accounts import User
from trilha.errors import Conflict, InvalidInput
from trilha.web.auth import SESSION_COOKIE, Db, clear_session_cookie, set_session_cookie
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
from trilha.workspaces import create_workspace

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
async def login(page: Anonymous, conn: Db) -> Response:
    form = await read_form(page.request)
    user = await accounts.authenticate(conn, email=form["email"], password=form["password"])
    if user is None:
        context = {"next": local_path(form["next"]), "email": form["email"], "failed": True}
        return render(page, "dashboard/auth/login.html", context, status_code=401)
    return await _start_session(page, conn, user, local_path(form["next"]))


@router.post("/logout")
async def logout(page: SignedIn, conn: Db) -> Response:
    await accounts.end_session(conn, page.request.cookies.get(SESSION_COOKIE, ""))
    response = redirect(page, "/login", "auth.signed_out")
    clear_session_cookie(response)
    return response


@router.get("/setup/{token}")
async def setup_page(token: str, page: Anonymous, conn: Db) -> Response:
    if not await accounts.is_setup_token_valid(conn, token):
        return render(page, "dashboard/auth/setup_invalid.html", {}, status_code=404)
    return render(page, "dashboard/auth/setup.html", {"values": {}, "errors": {}})


@router.post("/setup/{token}")
async def setup(token: str, page: Anonymous, conn: Db) -> Response:
    """Spend the link, create the owner and their first workspace, and sign them in."""
    form = await read_form(page.request)
    now = datetime.now(UTC)
    try:
        async with conn.begin_nested():  # a rejected form leaves the link unspent
            if not await accounts.use_setup_token(conn, token, now=now):
                return render(page, "dashboard/auth/setup_invalid.html", {}, status_code=404)
            user = await accounts.create_user(
                conn,
                email=form["email"],
                password=form["password"],
                name=form["user_name"],
                locale=page.t.locale,
                now=now,
            )
            workspace = await create_workspace(conn, user, name=form["name"], now=now)
    except (InvalidInput, Conflict) as exc:
        values = {name: form[name] for name in SETUP_FIELDS if name != "password"}
        context = {"values": values, "errors": field_errors(exc)}
        return render(page, "dashboard/auth/setup.html", context, status_code=422)
    return await _start_session(page, conn, user, f"/w/{workspace.id}/campaigns", "auth.welcome")


@router.post("/language")
async def switch_language(page: Anyone, conn: Db) -> Response:
    form = await read_form(page.request)
    locale = form["locale"] if form["locale"] in accounts.LOCALES else "pt-BR"
    if page.session is not None:
        await accounts.update_user(conn, page.user, locale=locale)
    response = redirect(page, local_path(form["next"]))
    set_language_cookie(page, response, locale)
    return response


async def _start_session(
    page: Page, conn: AsyncConnection, user: User, url: str, flash: str | None = None
) -> Response:
    token = await accounts.start_session(conn, user, now=datetime.now(UTC))
    response = redirect(page, url, flash)
    set_session_cookie(response, token, secure=page.settings.is_secure)
    set_language_cookie(page, response, user.locale)
    return response
