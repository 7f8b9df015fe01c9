"""RawPostback: a postback request exactly as received."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property


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
