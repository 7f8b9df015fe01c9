"""What every dashboard page knows: who is asking, in which workspace and language, and
whether a form that changes something carries its CSRF token."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from starlette.datastructures import FormData

from trilha.accounts import Session, User
from trilha.errors import Conflict, InvalidInput, InvalidText, NotFound, PermissionDenied
from trilha.i18n import Translator, negotiate_locale, translator
from trilha.ids import new_secret
from trilha.settings import Settings
from trilha.validation import NOT_TEXT, is_text
from trilha.web.auth import (
    CSRF_HEADER,
    SAFE_METHODS,
    SESSION_COOKIE,
    Db,
    current_session,
    runtime_of,
)
from trilha.workspaces import Membership, Role, Workspace, get_membership, list_memberships

LANG_COOKIE = "trilha_lang"
WORKSPACE_COOKIE = "trilha_workspace"
FLASH_COOKIE = "trilha_flash"
ANON_CSRF_COOKIE = "trilha_csrf"  # double-submit token of the pages shown before sign-in


class LoginRequired(Exception):
    """No valid session: the browser is sent to the sign-in page."""


@dataclass(frozen=True, slots=True)
class Page:
    request: Request
    t: Translator
    csrf_token: str
    session: Session | None
    memberships: tuple[Membership, ...] = ()
    membership: Membership | None = None

    @property
    def user(self) -> User:
        if self.session is None:
            raise LoginRequired
        return self.session.user

    @property
    def current(self) -> Membership:
        if self.membership is None:
            raise NotFound("workspace not found")
        return self.membership

    @property
    def workspace(self) -> Workspace:
        return self.current.workspace

    def require(self, role: Role) -> None:
        self.current.require(role)

    @property
    def settings(self) -> Settings:
        return runtime_of(self.request).settings


def request_translator(request: Request, session: Session | None = None) -> Translator:
    if session is not None:
        return translator(session.user.locale)
    chosen = request.cookies.get(LANG_COOKIE)
    return translator(chosen or negotiate_locale(request.headers.get("accept-language")))


async def check_csrf(request: Request, expected: str) -> None:
    if request.method in SAFE_METHODS:
        return
    sent = request.headers.get(CSRF_HEADER)
    if sent is None:
        value = (await submitted_form(request)).get("csrf_token")
        sent = value if isinstance(value, str) else ""
    if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise PermissionDenied("missing or wrong CSRF token; reload the page and try again")


async def anonymous(request: Request) -> Page:
    """Sign-in, setup and invitation pages: no session is needed, so CSRF is a double-submit
    cookie, or the session's token when there is one.

    They hold no connection while they work (checking a password takes a while), so a session
    cookie, if sent, is looked up on a connection of its own, released at once.
    """
    session = None
    if request.cookies.get(SESSION_COOKIE):
        async with runtime_of(request).read_engine.connect() as conn:
            session = await current_session(request, conn)
    if session is not None:
        await check_csrf(request, session.csrf_token)
        return Page(request, request_translator(request, session), session.csrf_token, session)
    cookie = request.cookies.get(ANON_CSRF_COOKIE, "")
    await check_csrf(request, cookie)
    return Page(request, request_translator(request), cookie or new_secret(), None)


async def anyone(request: Request, conn: Db) -> Page:
    """A page open to all, checked against the session's CSRF token when there is one."""
    session = await current_session(request, conn)
    if session is None:
        return await _anonymous_page(request, None)
    await check_csrf(request, session.csrf_token)
    return Page(request, request_translator(request, session), session.csrf_token, session)


async def _anonymous_page(request: Request, session: Session | None) -> Page:
    cookie = request.cookies.get(ANON_CSRF_COOKIE, "")
    await check_csrf(request, cookie)
    return Page(request, request_translator(request), cookie or new_secret(), session)


async def signed_in(page: Annotated[Page, Depends(anyone)]) -> Page:
    if page.session is None:
        raise LoginRequired
    return page


async def in_workspace(
    workspace_id: str, page: Annotated[Page, Depends(signed_in)], conn: Db
) -> Page:
    membership = await get_membership(conn, page.user, workspace_id)
    memberships = tuple(await list_memberships(conn, page.user))
    return Page(page.request, page.t, page.csrf_token, page.session, memberships, membership)


Anonymous = Annotated[Page, Depends(anonymous)]
Anyone = Annotated[Page, Depends(anyone)]
SignedIn = Annotated[Page, Depends(signed_in)]
InWorkspace = Annotated[Page, Depends(in_workspace)]


@dataclass(frozen=True, slots=True)
class Form:
    data: FormData

    def __getitem__(self, name: str) -> str:
        value = self.data.get(name)
        return value if isinstance(value, str) else ""

    def getlist(self, name: str) -> list[str]:
        return [v for v in self.data.getlist(name) if isinstance(v, str)]


async def read_form(request: Request) -> Form:
    return Form(await submitted_form(request))


async def submitted_form(request: Request) -> FormData:
    """The request's form (read once); refused when a part's charset cannot decode it, or
    decodes it to no text (UTF-7 can give a lone surrogate, which no database can store)."""
    try:
        form = await request.form()
    except UnicodeError:
        raise InvalidText({"form": "the form's charset cannot be read"}) from None
    if not all(is_text(name) and is_text(value) for name, value in form.multi_items()):
        raise InvalidText({"form": NOT_TEXT})
    return form


def field_errors(exc: InvalidInput | Conflict) -> dict[str, str]:
    if isinstance(exc, InvalidInput):
        return exc.fields
    return {exc.field or "_form": exc.message}


def local_path(value: str | None, default: str = "/") -> str:
    """``value`` when it is a path on this site, else ``default`` (no open redirects).

    >>> local_path("/w/1/campaigns"), local_path("//evil.test/"), local_path("https://evil.test")
    ('/w/1/campaigns', '/', '/')
    """
    if value and value.startswith("/") and not value.startswith(("//", "/\\")):
        return value
    return default
