"""The access log (TRILHA_ACCESS_LOG): a line per request with what identifies it (a request
id, the method, the route as written in the app, the workspace a route names, the status, the
time it took), never a path's values, a query or a header: tokens and buyers' data travel there.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Final

import structlog

from trilha.web.asgi import Message, Receive, Scope, Send

ACCESS: Final = structlog.stdlib.get_logger("trilha.access")


def route_of(scope: Scope) -> str:
    """The route a request went to, as written in the app (``/w/{workspace_id}/reports``),
    never its path's values or query."""
    path: str = scope["path"]
    if path.startswith("/r/"):
        return "/r/{slug}"
    if path.startswith("/pb/"):
        return "/pb/{merchant}"
    if path in ("/postback", "/pb"):
        return path
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        return "unmatched"
    # A route included under a prefix (the API's /api/v1) is written without it.
    head = template.split("{", 1)[0]
    start = path.find(head) if head else 0
    return path[:start] + template if start > 0 else template


async def logged(app: Any, scope: Scope, receive: Receive, send: Send) -> None:
    """Runs the request through ``app``, then logs a line of it: a request id, the method,
    the route, the workspace when the route names one, the status and the time it took."""
    started = time.perf_counter()
    status = 0

    async def sending(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        await send(message)

    try:
        await app(scope, receive, sending)
    finally:
        params = scope.get("path_params") or {}
        ACCESS.info(
            "request",
            request_id=secrets.token_hex(8),
            method=scope["method"],
            route=route_of(scope),
            workspace=params.get("workspace_id"),
            status=status,
            ms=round((time.perf_counter() - started) * 1000, 2),
        )
