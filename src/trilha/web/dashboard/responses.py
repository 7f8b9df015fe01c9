"""How dashboard pages answer: a rendered template, a redirect carrying a flash message, or,
for errors, the sign-in page or an HTML error page instead of the API's JSON."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import Request, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from trilha import __version__
from trilha.deliveries.problems import explain
from trilha.errors import NotFound, TrilhaError
from trilha.validation import is_text
from trilha.web.auth import SAFE_METHODS
from trilha.web.dashboard.pages import (
    ANON_CSRF_COOKIE,
    FLASH_COOKIE,
    LANG_COOKIE,
    WORKSPACE_COOKIE,
    LoginRequired,
    Page,
    request_translator,
)
from trilha.workspaces import Role

TEMPLATES = Jinja2Templates(directory=Path(__file__).parent.parent.parent / "templates")
YEAR = 365 * 24 * 3600


def render(
    page: Page, template: str, context: dict[str, Any], *, status_code: int = 200
) -> HTMLResponse:
    request = page.request
    flash = _read_flash(request)
    membership = page.membership
    response = TEMPLATES.TemplateResponse(
        request,
        template,
        {
            "t": page.t,
            "te": page.t.error,
            "problem": partial(explain, page.t),
            "csrf_token": page.csrf_token,
            "user": page.session.user if page.session else None,
            "memberships": page.memberships,
            "workspace": membership.workspace if membership else None,
            "role": membership.role.value if membership else None,
            "can_edit": membership is not None and membership.role.allows(Role.MEMBER),
            "is_owner": membership is not None and membership.role is Role.OWNER,
            "flash": flash,
            "version": __version__,
            "base_url": page.settings.base_url,
            # Links shown with trilha's own default address reach this machine only.
            "public_url_unset": page.settings.public_url is None,
            "here": request.url.path,
            **context,
        },
        status_code=status_code,
    )
    if flash is not None:
        response.delete_cookie(FLASH_COOKIE, path="/")
    if page.session is None and ANON_CSRF_COOKIE not in request.cookies:
        _set_cookie(page, response, ANON_CSRF_COOKIE, page.csrf_token, max_age=None)
    if membership and request.cookies.get(WORKSPACE_COOKIE) != membership.workspace.id:
        _set_cookie(page, response, WORKSPACE_COOKIE, membership.workspace.id, max_age=YEAR)
    return response


def redirect(
    page: Page, url: str, flash: str | None = None, *, kind: str = "success", **params: str
) -> RedirectResponse:
    """303 to ``url``; ``flash`` is a catalog key shown once on the next page."""
    response = RedirectResponse(url, status_code=303)
    if flash is not None:
        value = json.dumps({"kind": kind, "text": page.t(flash, **params)})
        encoded = base64.urlsafe_b64encode(value.encode()).decode()
        _set_cookie(page, response, FLASH_COOKIE, encoded, max_age=60)
    return response


def _read_flash(request: Request) -> dict[str, str] | None:
    raw = request.cookies.get(FLASH_COOKIE)
    if not raw:
        return None
    try:
        value = json.loads(base64.urlsafe_b64decode(raw.encode()))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(value, dict) or not is_text(value):  # no page can hold a lone surrogate
        return None
    return {"kind": str(value.get("kind", "")), "text": str(value.get("text", ""))}


def _set_cookie(page: Page, response: Response, name: str, value: str, max_age: int | None) -> None:
    secure = page.settings.is_secure
    response.set_cookie(
        name, value, max_age=max_age, path="/", secure=secure, httponly=True, samesite="lax"
    )


def set_language_cookie(page: Page, response: Response, locale: str) -> None:
    _set_cookie(page, response, LANG_COOKIE, locale, max_age=YEAR)


Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class DashboardRoute(APIRoute):
    """Dashboard errors become pages: sign-in redirects and HTML error pages, not JSON."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired:
                return login_redirect(request)
            except TrilhaError as exc:
                return error_page(request, exc)

        return handle


def login_redirect(request: Request) -> Response:
    target = request.url.path if request.method in SAFE_METHODS else "/"
    url = f"/login?next={quote(target)}"
    if request.headers.get("hx-request"):
        return Response(status_code=204, headers={"HX-Redirect": url})
    return RedirectResponse(url, status_code=303)


# Paths whose unknown addresses answer as programs expect (JSON, or a bare status), not a page.
MACHINE_PATHS = ("/api/", "/internal/", "/static/")


async def unknown_path(request: Request, exc: Exception) -> Response:
    """An address no route has: the dashboard's error page in the reader's language, except
    under the API and the other paths programs read, which keep FastAPI's JSON."""
    assert isinstance(exc, StarletteHTTPException)  # noqa: S101 -- registered for it only
    if exc.status_code != 404 or request.url.path.startswith(MACHINE_PATHS):
        return await http_exception_handler(request, exc)
    return error_page(request, NotFound("no page at this address"))


def error_page(request: Request, exc: TrilhaError) -> HTMLResponse:
    t = request_translator(request)
    status = exc.status_code
    title = (
        f"error.title_{status}" if status in (401, 403, 404, 409, 422, 429, 503) else "error.title"
    )
    headers = {"retry-after": str(exc.retry_after)} if exc.retry_after is not None else None
    return TEMPLATES.TemplateResponse(
        request,
        "dashboard/error.html",
        {
            "t": t,
            "te": t.error,
            "status": status,
            "title": title,
            "message": exc.message,
            "version": __version__,
        },
        status_code=exc.status_code,
        headers=headers,
    )
