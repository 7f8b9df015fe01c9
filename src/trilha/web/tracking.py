"""The hot path GET|HEAD /r/{slug}: a bare ASGI function, no framework in between."""

from __future__ import annotations

import re
import string
from datetime import UTC, datetime
from urllib.parse import quote

from sqlalchemy.exc import SQLAlchemyError

from trilha.click_writer import Redirect
from trilha.clicks import ClickRequest, read_query
from trilha.errors import StorageUnavailable
from trilha.i18n import Translator, negotiate_locale, translator
from trilha.runtime import Runtime
from trilha.visitors import Visitor, parse_device
from trilha.web.asgi import (
    MAX_HEADER_VALUE,
    Receive,
    Scope,
    Send,
    header_map,
    request_host,
    send_html,
)

SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
LOCATION_SAFE = string.punctuation.replace('"', "").replace("<", "").replace(">", "")
# What quote() leaves as it is with LOCATION_SAFE: printable ASCII but space, '"', '<' and '>'.
_LEFT_AS_IS = bytes(byte for byte in range(0x21, 0x7F) if byte not in b'"<>')

# The headers a click reads.
_CLICK_HEADERS = frozenset((b"host", b"user-agent", b"referer", b"x-forwarded-for"))

# What an ad's visitor reads when no offer follows, in their browser's language (pt-BR first).
NOT_FOUND_PAGE = "visitor.link_not_found"
UNAVAILABLE_PAGE = "visitor.unavailable"


async def redirect(runtime: Runtime, scope: Scope, receive: Receive, send: Send) -> None:
    method = scope["method"]
    if method not in ("GET", "HEAD"):
        t = _visitors_language(scope)
        await send_html(
            send,
            405,
            t("visitor.method_not_allowed"),
            lang=t.locale,
            extra=[(b"allow", b"GET, HEAD")],
        )
        return
    slug = scope["path"][3:]
    if not SLUG.fullmatch(slug):
        t = _visitors_language(scope)
        await send_html(send, 404, t(NOT_FOUND_PAGE), lang=t.locale, head_only=method == "HEAD")
        return
    request = click_request(runtime, scope, slug)
    try:
        if method == "HEAD":
            outcome = await runtime.clicks.preview(request)
        else:
            outcome = await runtime.clicks.record(request)
    except (StorageUnavailable, SQLAlchemyError, OSError):
        t = _visitors_language(scope)
        await send_html(
            send,
            503,
            t(UNAVAILABLE_PAGE),
            lang=t.locale,
            head_only=method == "HEAD",
            extra=[(b"retry-after", b"5")],
        )
        return
    location = outcome.location if isinstance(outcome, Redirect) else outcome.url
    if location is None:
        t = _visitors_language(scope)
        await send_html(send, 404, t(NOT_FOUND_PAGE), lang=t.locale, head_only=method == "HEAD")
        return
    await send(
        {
            "type": "http.response.start",
            "status": 302,
            "headers": [
                (b"location", location_header(location)),
                (b"cache-control", b"no-store"),
                (b"referrer-policy", b"no-referrer-when-downgrade"),
                (b"content-length", b"0"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})


def location_header(location: str) -> bytes:
    """The offer URL as a Location header: what a header cannot carry percent-encoded.

    >>> location_header('https://o.example/a b?q="x"&c=ç')
    b'https://o.example/a%20b?q=%22x%22&c=%C3%A7'
    """
    if location.isascii():
        encoded = location.encode("ascii")
        if not encoded.translate(None, _LEFT_AS_IS):  # most offer URLs: nothing to encode
            return encoded
    return quote(location, safe=LOCATION_SAFE).encode("ascii")


def _visitors_language(scope: Scope) -> Translator:
    """Read only when no offer follows: the redirect itself needs no language."""
    accepted = header_map(scope, (b"accept-language",)).get(b"accept-language")
    return translator(negotiate_locale(accepted))


def click_request(runtime: Runtime, scope: Scope, slug: str) -> ClickRequest:
    headers = header_map(scope, _CLICK_HEADERS)
    peer = scope["client"][0] if scope.get("client") else "0.0.0.0"  # noqa: S104 -- unknown peer
    ip = runtime.proxies.client_ip(peer, headers.get(b"x-forwarded-for"))
    user_agent = headers.get(b"user-agent", "")
    referrer = headers.get(b"referer", "")
    # Positional arguments, named as the fields are: keywords cost a third more, every click.
    visitor = Visitor(ip, user_agent, referrer, parse_device(user_agent), runtime.countries(ip))
    query = scope.get("query_string", b"").decode("utf-8", "replace")
    params, cut = read_query(query)
    # A header that reaches header_map's cap may have been cut there: noted as cut.
    if len(referrer) >= MAX_HEADER_VALUE:
        cut.append("referrer")
    if len(user_agent) >= MAX_HEADER_VALUE:
        cut.append("user_agent")
    host = request_host(headers.get(b"host", ""))
    return ClickRequest(host, slug, visitor, params, datetime.now(UTC), cut)
