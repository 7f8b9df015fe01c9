"""create_app(settings) -> the ASGI app: hot paths first, then the REST API and the dashboard."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.staticfiles import StaticFiles

from trilha import __version__
from trilha.logs import configure_logging
from trilha.runtime import Runtime
from trilha.settings import Settings
from trilha.web import health, internal, metrics, tracking
from trilha.web.access import logged
from trilha.web.api import router as api_router
from trilha.web.asgi import Receive, Scope, Send
from trilha.web.dashboard import router as dashboard_router
from trilha.web.dashboard.responses import unknown_path
from trilha.web.edge import Edge
from trilha.web.errors import install_error_handlers
from trilha.web.postback import is_postback_path, postback


class TrilhaApp:
    """Sends the hot paths (/r/..., /postback, /pb) straight to bare ASGI handlers; the rest
    goes to FastAPI, through the edge that reads and checks request bodies first."""

    def __init__(self, runtime: Runtime, web: FastAPI) -> None:
        self.runtime = runtime
        self.web = web
        self.edge = Edge(runtime, web)
        self.access_log = runtime.settings.access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.access_log and scope["type"] == "http":
            await logged(self.dispatch, scope, receive, send)
        else:
            await self.dispatch(scope, receive, send)

    async def dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            if path.startswith("/r/"):
                await tracking.redirect(self.runtime, scope, receive, send)
                return
            if is_postback_path(path):
                await postback(self.runtime, scope, receive, send)
                return
        await self.edge(scope, receive, send)


def create_app(settings: Settings | None = None) -> TrilhaApp:
    settings = settings or Settings()
    configure_logging(settings)
    runtime = Runtime.from_settings(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        runtime.start()
        # What start-up made (modules, routes, compiled statements) lives as long as the
        # process: keep the cycle collector from scanning it again on every full collection
        # (collected first, so that no start-up garbage is kept for good).
        gc.collect()
        gc.freeze()
        try:
            yield
        finally:
            await runtime.stop()

    web = FastAPI(
        title="trilha",
        version=__version__,
        summary="Server-to-server postback conversion tracker",
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
        lifespan=lifespan,
    )
    web.state.runtime = runtime
    install_error_handlers(web)
    web.add_exception_handler(StarletteHTTPException, unknown_path)
    web.include_router(api_router)
    web.include_router(internal.router)  # the proxy's questions, answered to it alone
    web.include_router(health.router)
    web.include_router(metrics.router)  # to the allowed addresses, or with the token
    web.mount("/static", StaticFiles(packages=[("trilha", "static")]), name="static")
    web.add_route("/favicon.ico", _favicon, include_in_schema=False)
    web.include_router(dashboard_router, include_in_schema=False)
    return TrilhaApp(runtime, web)


async def _favicon(_request: Request) -> Response:
    """Where browsers look for the icon of a page that names none (a JSON answer, say)."""
    return RedirectResponse("/static/favicon.svg", status_code=301)
