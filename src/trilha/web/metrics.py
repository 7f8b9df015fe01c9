"""GET /metrics: the counters of trilha.metrics and the outbox's gauges, in Prometheus' text
format. Answered to the addresses of TRILHA_METRICS_ALLOW (the loopback by default), or to
anyone with the bearer token TRILHA_METRICS_TOKEN; a request a trusted proxy forwards counts as
its client's, so that a proxy on the loopback does not make the metrics public."""

from __future__ import annotations

import hmac
from datetime import UTC, datetime
from ipaddress import ip_address

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy.exc import SQLAlchemyError

from trilha.deliveries.outbox import Backlog, backlog
from trilha.metrics import exposition
from trilha.settings import Settings
from trilha.visitors import client_ip
from trilha.web.auth import runtime_of

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    runtime = runtime_of(request)
    refusal = _refusal(request, runtime.settings)
    if refusal is not None:
        return refusal
    outbox: Backlog | None
    try:
        async with runtime.read_engine.connect() as conn:
            outbox = await conn.run_sync(lambda sync: backlog(sync, now=datetime.now(UTC)))
    except (SQLAlchemyError, OSError):
        outbox = None  # the counters still tell what happened before the database went away
    return Response(
        exposition(outbox),
        media_type=CONTENT_TYPE_LATEST,
        headers={"cache-control": "no-store"},
    )


def _refusal(request: Request, settings: Settings) -> Response | None:
    """None when the caller may read the metrics; else the answer it gets."""
    authorization = request.headers.get("authorization")
    if authorization is not None:
        scheme, _, token = authorization.partition(" ")
        expected = settings.metrics_token
        if (
            expected
            and scheme.lower() == "bearer"
            and hmac.compare_digest(token.strip().encode(), expected.encode())
        ):
            return None
        return PlainTextResponse(
            "wrong token\n", status_code=401, headers={"www-authenticate": "Bearer"}
        )
    if _is_allowed(request, settings):
        return None
    return PlainTextResponse("not an address allowed to read the metrics\n", status_code=403)


def _is_allowed(request: Request, settings: Settings) -> bool:
    peer = request.client.host if request.client else ""
    forwarded = request.headers.get("x-forwarded-for")
    try:
        address = ip_address(client_ip(peer, forwarded, settings.trusted_proxies))
    except ValueError:
        return False
    address = getattr(address, "ipv4_mapped", None) or address
    return any(address.version == net.version and address in net for net in settings.metrics_allow)
