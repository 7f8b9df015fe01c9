"""The edge in front of the API and the dashboard.

Before a request reaches them, and so before it takes a database connection: its path, query
and headers are text; a route that needs a signed-in caller has one (checked with a short read
that takes no write lock); and its whole body is in memory, within the route's size limit and the
body timeout. Slow, huge or anonymous bodies thus never hold a transaction, nor fill memory.
"""

from __future__ import annotations

from enum import StrEnum
from urllib.parse import unquote_to_bytes

from fastapi import FastAPI, Request, Response
from starlette.routing import Match

from trilha.errors import BodyTimeout, BodyTooLarge, InvalidText, NotAuthenticated, TrilhaError
from trilha.runtime import Runtime
from trilha.web.asgi import Receive, Scope, Send, read_body, replay_body
from trilha.web.auth import SAFE_METHODS, verify_caller
from trilha.web.dashboard.responses import error_page, login_redirect
from trilha.web.errors import trilha_error
from trilha.web.limits import BODY_LIMIT

ANONYMOUS_PATHS = ("/login", "/setup/", "/invite/", "/language")
ANONYMOUS_BODY_LIMIT = 16 * 1024  # a sign-in or setup form, with room to spare
CLOSE = {"connection": "close"}  # the rest of a refused body is not read


class RouteKind(StrEnum):
    API = "api"  # an API key or a session; errors as JSON
    DASHBOARD = "dashboard"  # a session; errors as pages, no session: the sign-in page
    ANONYMOUS = "anonymous"  # sign-in, setup and invitation links, language: no caller needed


def route_kind(path: str) -> RouteKind:
    if path.startswith("/api/"):
        return RouteKind.API
    if path.startswith(ANONYMOUS_PATHS):
        return RouteKind.ANONYMOUS
    return RouteKind.DASHBOARD


class Edge:
    def __init__(self, runtime: Runtime, web: FastAPI) -> None:
        self.runtime = runtime
        self.web = web

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.web(scope, receive, send)
            return
        kind = route_kind(scope["path"])
        try:
            check_text(scope)
            if not expects_body(scope):
                await self.web(scope, receive, send)
                return
            body = await self._read_body(scope, receive, kind)
        except TrilhaError as exc:
            await refuse(scope, receive, send, kind, exc)
            return
        if body is not None:  # None: the client left before its body arrived
            await self.web(scope, replay_body(body, receive), send)

    async def _read_body(self, scope: Scope, receive: Receive, kind: RouteKind) -> bytes | None:
        limit = self._limit(scope, kind)
        length = content_length(scope)
        if length is not None and length > limit:
            raise BodyTooLarge(f"the body is larger than {limit} bytes")
        if kind is not RouteKind.ANONYMOUS:
            async with self.runtime.read_engine.connect() as conn:
                await verify_caller(Request(scope), conn, api=kind is RouteKind.API)
        timeout = self.runtime.settings.request_body_timeout
        try:
            read = await read_body(receive, limit, timeout=timeout)
        except TimeoutError:
            raise BodyTimeout(f"the body did not arrive within {timeout:g} s") from None
        if read is None:
            return None
        body, too_large = read
        if too_large:
            raise BodyTooLarge(f"the body is larger than {limit} bytes")
        if media_type(scope) == b"application/x-www-form-urlencoded":
            problem = urlencoded_problem(body)
            if problem:
                raise InvalidText({"form": problem})
        return body

    def _limit(self, scope: Scope, kind: RouteKind) -> int:
        """The limit its route declares (see body_limit), else the route kind's."""
        if kind is RouteKind.ANONYMOUS:
            return ANONYMOUS_BODY_LIMIT
        for route in self.web.router.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                declared = getattr(getattr(route, "endpoint", None), BODY_LIMIT, None)
                if isinstance(declared, int):
                    return declared
                break
        return self.runtime.settings.request_body_limit


async def refuse(
    scope: Scope, receive: Receive, send: Send, kind: RouteKind, exc: TrilhaError
) -> None:
    request = Request(scope)
    response: Response
    if kind is RouteKind.DASHBOARD and isinstance(exc, NotAuthenticated):
        response = login_redirect(request)
    elif kind is RouteKind.API:
        response = await trilha_error(request, exc)
    else:
        response = error_page(request, exc)
    if isinstance(exc, BodyTooLarge | BodyTimeout):
        response.headers.update(CLOSE)
    await response(scope, receive, send)


def content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def expects_body(scope: Scope) -> bool:
    """Whether a body may follow: one of a declared length, else any but a GET, HEAD or OPTIONS
    (a chunked body, or HTTP/2, declare none) or one sent chunked anyway."""
    length = content_length(scope)
    if length is not None:
        return length > 0
    if scope["method"] not in SAFE_METHODS:
        return True
    return any(name == b"transfer-encoding" for name, _ in scope["headers"])


def media_type(scope: Scope) -> bytes:
    for name, value in scope["headers"]:
        if name == b"content-type":
            media: bytes = value.split(b";", 1)[0].strip().lower()
            return media
    return b""


def check_text(scope: Scope) -> None:
    """InvalidText naming the part of the request (path, query, a header) that is no text."""
    path = scope.get("raw_path") or scope["path"].encode()
    if b"%" in path or "\x00" in scope["path"]:
        problem = _bytes_problem(unquote_to_bytes(path)) or _bytes_problem(scope["path"].encode())
        if problem:
            raise InvalidText({"path": problem})
    problem = urlencoded_problem(scope.get("query_string", b""))
    if problem:
        raise InvalidText({"query": problem})
    for name, value in scope["headers"]:
        if b"\x00" in value:
            raise InvalidText({f"header {name.decode('latin-1')}": "holds a NUL character"})


def urlencoded_problem(data: bytes) -> str | None:
    """What keeps a query string or urlencoded form from being text, naming the field; None
    when it is text.

    >>> urlencoded_problem(b"q=caf%C3%A9&name=a%00b")
    "the field 'name' holds a NUL character (%00)"
    >>> urlencoded_problem(b"q=caf%E9")
    "the field 'q' is not UTF-8 text"
    """
    if b"%" not in data and b"\x00" not in data and data.isascii():
        return None
    for piece in data.split(b"&"):
        name, _, value = piece.partition(b"=")
        for part in (name, value):
            problem = _bytes_problem(unquote_to_bytes(part))
            if problem:
                shown = unquote_to_bytes(name).decode("utf-8", "replace").replace("\x00", "%00")
                return f"the field {shown[:40]!r} {problem}"
    return None


def _bytes_problem(data: bytes) -> str | None:
    if b"\x00" in data:
        return "holds a NUL character (%00)"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    return None
