"""RawPostback: a postback request exactly as received, read from ASGI within a size limit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from trilha.web.asgi import Receive, Scope


@dataclass(frozen=True)
class RawPostback:
    method: str
    path: str
    query: str
    headers: tuple[tuple[str, str], ...]  # lower-case names, Latin-1 values, in order
    body: bytes
    source_ip: str
    host: str
    received_at: datetime
    merchant_key: str | None = None
    body_limit: int = 256 * 1024
    body_too_large: bool = False

    @cached_property
    def header_map(self) -> dict[str, str]:
        found: dict[str, str] = {}
        for name, value in self.headers:
            found.setdefault(name, value)
        return found

    @property
    def content_type(self) -> str:
        return self.header_map.get("content-type", "")


async def read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """The body, stopping at ``limit`` bytes (chunked bodies too); True when it was larger."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"".join(chunks), True
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks), False


def scope_headers(scope: Scope) -> tuple[tuple[str, str], ...]:
    return tuple(
        (name.decode("latin-1").lower(), value.decode("latin-1").replace("\x00", ""))
        for name, value in scope["headers"]
    )
