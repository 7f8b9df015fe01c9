"""The hot path GET|POST /postback, /pb and /pb/{merchant}: a bare ASGI function."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from sqlalchemy.exc import SQLAlchemyError

from trilha.conversions.outcome import Outcome
from trilha.errors import StorageUnavailable
from trilha.postbacks.payload import parse_request
from trilha.postbacks.raw import RawPostback
from trilha.runtime import Runtime
from trilha.web.asgi import Receive, Scope, Send, read_body, request_host, scope_headers

MERCHANT_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,39}")
PATHS = ("/postback", "/pb")
CLOSE = [(b"connection", b"close")]


def is_postback_path(path: str) -> bool:
    return path.rstrip("/") in PATHS or path.startswith("/pb/")


async def postback(runtime: Runtime, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["method"] not in ("GET", "POST"):
        await send_json(send, 405, {"status": Outcome.INVALID, "reason": "use GET or POST"})
        return
    merchant_key = None
    path = scope["path"].rstrip("/")
    if path.startswith("/pb/"):
        merchant_key = path[4:]
        if not MERCHANT_KEY.fullmatch(merchant_key):
            await send_json(send, 404, {"status": Outcome.INVALID, "reason": "unknown path"})
            return
    settings = runtime.settings
    limit = settings.postback_body_limit
    headers = scope_headers(scope)
    header_map = dict(reversed(headers))
    declared = header_map.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        body, too_large = b"", True  # refused (and logged) before a byte of it is read
    elif declared == "0" or (declared is None and _sends_no_body(scope, header_map)):
        body, too_large = b"", False  # a GET, most often: nothing to wait for
    else:
        try:
            read = await read_body(receive, limit, timeout=settings.request_body_timeout)
        except TimeoutError:
            reason = f"the body did not arrive within {settings.request_body_timeout:g} s"
            await send_json(send, 408, {"status": Outcome.INVALID, "reason": reason}, extra=CLOSE)
            return
        if read is None:
            return  # the sender hung up before its body arrived: no one to answer
        body, too_large = read
    query = scope.get("query_string", b"").decode("utf-8", "replace")
    if "\x00" in query:  # stored escaped, and refused by the query's parser with a reason
        query = query.replace("\x00", "%00")
    peer = scope["client"][0] if scope.get("client") else "0.0.0.0"  # noqa: S104 -- unknown peer
    raw = RawPostback(
        method=scope["method"],
        path=scope["path"],
        query=query,
        headers=headers,
        body=body,
        source_ip=runtime.proxies.client_ip(peer, header_map.get("x-forwarded-for")),
        host=request_host(header_map.get("host", "")),
        received_at=datetime.now(UTC),
        merchant_key=merchant_key,
        body_limit=limit,
        body_too_large=too_large,
    )
    try:
        result = await runtime.postbacks.receive(await parse_request(raw))
    except (StorageUnavailable, SQLAlchemyError, OSError):
        await send_json(
            send,
            503,
            {"status": "error", "reason": "not stored; please retry"},
            extra=[(b"retry-after", b"5")],
        )
        return
    await send_json(send, result.http_status, result.answer())


def _sends_no_body(scope: Scope, header_map: dict[str, str]) -> bool:
    """HTTP/1 sends a body only with a length or chunked; HTTP/2 may send one with neither."""
    return "transfer-encoding" not in header_map and scope.get("http_version") != "2"


async def send_json(
    send: Send,
    status: int,
    body: dict[str, object],
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    payload = json.dumps(body, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"cache-control", b"no-store"),
                *(extra or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
