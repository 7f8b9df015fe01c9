"""The app with settings of a test's own, and an HTTP client speaking to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from trilha.app import create_app
from trilha.settings import Settings


@asynccontextmanager
async def running_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings)
    app.runtime.start()
    try:
        transport = httpx.ASGITransport(app=app, client=("198.51.100.23", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            yield http
    finally:
        await app.runtime.stop()
