"""What a sample delivery is: a sale in a platform's words, and the request that platform sends.

Samples feed test postbacks (trilha.postbacks.trial); each platform's lives in its module of
trilha.postbacks.platforms, next to the preset it must pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from trilha.conversions.status import Status
from trilha.postbacks.event_time import BRAZIL

Words = tuple[str | None, str | None]  # the platform's (event, status) words
BUYER = {"name": "Comprador Teste", "email": "comprador@example.com"}
PRODUCT = "Produto de teste"
USER_AGENT = ("user-agent", "trilha (test postback)")  # tells a test apart in the log


@dataclass(frozen=True, slots=True)
class Sale:
    """What a sample reports; ``event`` and ``status`` are in the platform's words."""

    click_id: str
    event: str | None
    status: str | None
    value: Decimal
    currency: str
    txid: str
    secret: str | None
    sent_at: datetime


@dataclass(frozen=True, slots=True)
class SampleRequest:
    method: str
    content_type: str
    query: str  # besides the workspace's ?token=
    headers: tuple[tuple[str, str], ...]  # lower-case names
    body: bytes


@dataclass(frozen=True, slots=True)
class Sample:
    """A platform's usual words for (our event type, our status), and its request."""

    words: Callable[[str, Status], Words | None]
    build: Callable[[Sale], SampleRequest]


def by_status(table: Mapping[Status, Words]) -> Callable[[str, Status], Words | None]:
    """Usual words of a platform whose words depend on the status only."""
    return lambda _event_type, status: table.get(status)


def json_request(
    content: Mapping[str, Any], headers: tuple[tuple[str, str], ...] = ()
) -> SampleRequest:
    body = json.dumps(content, ensure_ascii=False).encode()
    return SampleRequest(
        "POST", "application/json", "", (*base_headers("application/json"), *headers), body
    )


def form_request(fields: Mapping[str, str | None]) -> SampleRequest:
    content_type = "application/x-www-form-urlencoded"
    body = urlencode({k: v for k, v in fields.items() if v is not None}).encode()
    return SampleRequest("POST", content_type, "", base_headers(content_type), body)


def base_headers(content_type: str) -> tuple[tuple[str, str], ...]:
    return (("content-type", content_type), USER_AGENT)


def net(value: Decimal) -> Decimal:
    """The seller's share after a 10 % platform fee, for merchants that count net value."""
    return (value * Decimal("0.9")).quantize(Decimal("0.01"))


def cents(value: Decimal) -> int:
    return int(value.scaleb(2).to_integral_value())


def millis(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def local_time(at: datetime, pattern: str = "%Y-%m-%d %H:%M:%S") -> str:
    """Time as Brazilian platforms write it: São Paulo's wall clock, no offset."""
    return at.astimezone(BRAZIL).strftime(pattern)
