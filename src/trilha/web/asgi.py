"""The few ASGI helpers the hot paths use instead of a framework."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Container, Iterable, MutableMapping
from functools import lru_cache
from html import escape
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

MAX_HEADER_VALUE = 4096


def header_map(scope: Scope, wanted: Container[bytes]) -> dict[bytes, str]:
    """The first value of each wanted header, decoded as Latin-1, capped, without NULs."""
    found: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in wanted and name not in found:
            found[name] = value[:MAX_HEADER_VALUE].decode("latin-1").replace("\x00", "")
    return found


async def read_body(receive: Receive, limit: int, *, timeout: float) -> tuple[bytes, bool] | None:
    """The body, stopping at ``limit`` bytes (chunked bodies too), and True when it was larger;
    None when the client went away. TimeoutError when the whole body took over ``timeout``
    seconds to arrive."""
    chunks: list[bytes] = []
    size = 0
    async with asyncio.timeout(timeout):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return b"".join(chunks), True
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), False


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body already read, then listens on for the client leaving."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def scope_headers(scope: Scope) -> tuple[tuple[str, str], ...]:
    """Every header in order: names lower-cased, values as Latin-1 without NULs."""
    return tuple(
        (name.decode("latin-1").lower(), value.decode("latin-1").replace("\x00", ""))
        for name, value in scope["headers"]
    )


@lru_cache(maxsize=256)
def request_host(host_header: str) -> str:
    """The Host header without its port, lower-cased (cached: a server answers few hosts).

    >>> request_host("Track.Example.com:8443"), request_host("[::1]:8000")
    ('track.example.com', '[::1]')
    """
    host = host_header.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if ":" in host else host


async def send_html(
    send: Send,
    status: int,
    message: str,
    *,
    lang: str = "en",
    head_only: bool = False,
    extra: Iterable[tuple[bytes, bytes]] = (),
) -> None:
    body = (
        f"<!doctype html><html lang={escape(lang)}><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        '<title>trilha</title><body style="font-family:system-ui;margin:4rem auto;max-width:32rem">'
        f"<p>{escape(message)}</p></body></html>"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b"" if head_only else body})
