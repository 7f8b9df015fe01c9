"""GET /internal/tls-allowed?domain=...: may the proxy in front get a certificate for a host?

Caddy's on-demand TLS asks it before it asks a certificate authority for a name it was never
told of (deploy/Caddyfile). 200: yes, the public host or a verified custom domain; 404: no. It
answers only the proxy itself, connected from the loopback or a trusted proxy's address, and
never a request that a proxy forwarded for someone else.
"""

from __future__ import annotations

from ipaddress import ip_address
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from trilha.custom_domains import certificate_host, may_have_certificate
from trilha.settings import Settings
from trilha.web.auth import runtime_of

FORWARDING_HEADERS = ("x-forwarded-for", "forwarded")

router = APIRouter(prefix="/internal", include_in_schema=False)


@router.get("/tls-allowed")
async def tls_allowed(request: Request, domain: str = "") -> PlainTextResponse:
    runtime = runtime_of(request)
    if not is_local_proxy(request, runtime.settings):
        return PlainTextResponse("only the proxy in front of trilha may ask\n", status_code=403)
    host = certificate_host(domain)
    if host is None:
        return PlainTextResponse("domain must be a domain name\n", status_code=404)
    async with runtime.read_engine.connect() as conn:
        allowed = await may_have_certificate(conn, host, public_host=public_host(runtime.settings))
    if not allowed:
        return PlainTextResponse("neither the public host nor a verified domain\n", status_code=404)
    return PlainTextResponse("ok\n")


def is_local_proxy(request: Request, settings: Settings) -> bool:
    """Connected from the loopback or a trusted proxy, and not forwarded on someone's behalf."""
    if any(name in request.headers for name in FORWARDING_HEADERS):
        return False
    try:
        peer = ip_address(request.client.host if request.client else "")
    except ValueError:
        return False
    peer = getattr(peer, "ipv4_mapped", None) or peer
    return peer.is_loopback or any(
        peer.version == net.version and peer in net for net in settings.trusted_proxies
    )


def public_host(settings: Settings) -> str:
    """The host of TRILHA_PUBLIC_URL; none when it is not set (trilha then has no public name)."""
    if settings.public_url is None:
        return ""
    return (urlsplit(settings.public_url).hostname or "").rstrip(".")
