"""One HTTP attempt: checked address, no redirects, bounded time and answer, classified once.

TransportError
 └── raised for anything that is no HTTP answer: the attempt is ``temporary`` (a timeout, a
     refused connection) or ``refused`` (trilha would not connect: see trilha.deliveries.safety)
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx

from trilha.deliveries.jobs import OutboundRequest
from trilha.deliveries.kinds import AttemptOutcome
from trilha.deliveries.problems import CONNECT_FAILED, REDIRECT, TIMED_OUT
from trilha.deliveries.safety import Target, UnsafeTarget, resolve_target
from trilha.deliveries.schedule import parse_retry_after
from trilha.settings import Settings

EXCERPT = 1000  # characters of an answer the attempt log keeps


@dataclass(frozen=True, slots=True)
class Policy:
    timeout: float
    response_limit: int
    allow_private: bool

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(
            timeout=settings.delivery_timeout,
            response_limit=settings.delivery_response_limit,
            allow_private=settings.delivery_allow_private,
        )


@dataclass(frozen=True, slots=True)
class Sent:
    """What one attempt came to."""

    outcome: AttemptOutcome
    request: str  # the request line, secrets masked
    status_code: int | None = None
    latency_ms: int = 0
    response: str = ""
    error: str = ""
    retry_after: timedelta | None = None


def classify(status_code: int) -> AttemptOutcome:
    """2xx succeed; 408, 429 and 5xx are temporary; anything else (3xx never followed, other
    4xx) is a rejection.

    >>> [str(classify(c)) for c in (200, 302, 404, 408, 429, 503)]
    ['success', 'rejected', 'rejected', 'temporary', 'temporary', 'temporary']
    """
    if 200 <= status_code < 300:
        return AttemptOutcome.SUCCESS
    if status_code in (408, 429) or status_code >= 500:
        return AttemptOutcome.TEMPORARY
    return AttemptOutcome.REJECTED


def new_client(policy: Policy) -> httpx.AsyncClient:
    """The worker's client: redirects never followed, no proxy from the environment (it would
    connect in place of the checked address)."""
    return httpx.AsyncClient(
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(policy.timeout),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=100),
        headers={"user-agent": "trilha", "accept-encoding": "identity"},
    )


async def send(
    client: httpx.AsyncClient, request: OutboundRequest, policy: Policy, *, now: datetime
) -> Sent:
    described = request.described()
    started = time.perf_counter()
    try:
        target = await resolve_target(request.url, allow_private=policy.allow_private)
        async with asyncio.timeout(policy.timeout):
            code, headers, body = await _exchange(client, request, target, policy.response_limit)
    except UnsafeTarget as exc:
        return Sent(AttemptOutcome.REFUSED, described, error=str(exc))
    except (httpx.HTTPError, OSError, TimeoutError) as exc:
        return Sent(AttemptOutcome.TEMPORARY, described, latency_ms=_ms(started), error=_error(exc))
    outcome = classify(code)
    return Sent(
        outcome,
        described,
        status_code=code,
        latency_ms=_ms(started),
        response=body.decode("utf-8", "replace")[:EXCERPT],
        error=REDIRECT.say(location=headers.get("location", "?")[:200])
        if 300 <= code < 400
        else "",
        retry_after=parse_retry_after(headers.get("retry-after"), now)
        if outcome is AttemptOutcome.TEMPORARY
        else None,
    )


async def _exchange(
    client: httpx.AsyncClient, request: OutboundRequest, target: Target, limit: int
) -> tuple[int, httpx.Headers, bytes]:
    """Connect to the checked address, naming the URL's host in Host and TLS (SNI and the
    certificate check); read at most ``limit`` bytes of the answer."""
    url = httpx.URL(request.url).copy_with(host=str(target.address))
    default_port = 443 if target.scheme == "https" else 80
    host = target.host if target.port == default_port else f"{target.host}:{target.port}"
    headers = [("host", host), *request.headers]
    outgoing = client.build_request(
        request.method,
        url,
        headers=headers,
        content=request.body,
        extensions={"sni_hostname": target.host},
    )
    response = await client.send(outgoing, stream=True)
    try:
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) >= limit:
                break
        return response.status_code, response.headers, bytes(body[:limit])
    finally:
        await response.aclose()


def _error(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return TIMED_OUT.say()
    if isinstance(exc, httpx.ConnectError) and str(exc):
        return CONNECT_FAILED.say(detail=exc)[:500]
    return f"{type(exc).__name__}: {exc}"[:500] if str(exc) else type(exc).__name__


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
