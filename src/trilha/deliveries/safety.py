"""Outbound requests go to public addresses only: the host is resolved and checked here, and the
request then connects to the checked address (so a second DNS answer cannot swap it for an
internal one).

Refused: loopback, private, link-local, shared (CGNAT, 100.64/10), multicast, reserved and
unspecified addresses, in IPv4, IPv6 and IPv4-mapped IPv6, and IPv6 addresses that lead to
such an IPv4 address (6to4, Teredo). A setting lets tests and on-premise installs reach
private addresses.
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address
from urllib.parse import urlsplit

from trilha.deliveries.problems import DOES_NOT_RESOLVE, NO_ANSWER_FROM_DNS, NOT_PUBLIC

IPAddress = IPv4Address | IPv6Address


class UnsafeTarget(Exception):
    """The URL may not be called: a reason a user can act on."""


class NotPublic(UnsafeTarget):
    """The host is, or resolves to, an address that is not public."""

    def __init__(self, host: str, address: IPAddress) -> None:
        super().__init__(NOT_PUBLIC.say(host=host, address=address))
        self.host, self.address = host, address


@dataclass(frozen=True, slots=True)
class Target:
    """Where to connect: the URL's host, and the address checked for it."""

    scheme: str
    host: str
    port: int
    address: IPAddress


def is_public(address: IPAddress) -> bool:
    """Whether an address may be called from trilha.

    >>> [is_public(ip_address(a)) for a in ("93.184.216.34", "10.0.0.1", "100.64.0.1")]
    [True, False, False]
    >>> [is_public(ip_address(a)) for a in ("::1", "::ffff:127.0.0.1", "fe80::1", "224.0.0.1")]
    [False, False, False, False]
    >>> is_public(ip_address("2606:4700::1111"))
    True
    """
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if isinstance(address, IPv6Address) and not all(map(is_public, carried_ipv4(address))):
        return False
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_link_local
    )


def carried_ipv4(address: IPv6Address) -> tuple[IPv4Address, ...]:
    """The IPv4 addresses a 6to4 (2002::/16) or Teredo (2001::/32: server and client) address
    leads to: a relay on the way delivers to them.

    >>> carried_ipv4(ip_address("2002:a9fe:a9fe::1")), carried_ipv4(ip_address("2606:4700::1"))
    ((IPv4Address('169.254.169.254'),), ())
    """
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    return ()


def split_target(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, or UnsafeTarget saying what is wrong.

    >>> split_target("https://Tracker.example/pb?x=1")
    ('https', 'tracker.example', 443)
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeTarget(f"malformed URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise UnsafeTarget("the URL must start with http:// or https://")
    if not parts.hostname:
        raise UnsafeTarget("the URL has no host")
    if parts.username or parts.password:
        raise UnsafeTarget("the URL may not carry a user name or password")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


async def resolve_target(url: str, *, allow_private: bool) -> Target:
    """The address to connect to for ``url``; UnsafeTarget when any address of the host is not
    public (a host that also resolves to an internal address is refused whole)."""
    scheme, host, port = split_target(url)
    try:
        addresses = [ip_address(host)]
    except ValueError:
        addresses = await _lookup(host, port)
    if not allow_private:
        for address in addresses:
            if not is_public(address):
                raise NotPublic(host, address)
    return Target(scheme, host, port, addresses[0])


async def _lookup(host: str, port: int) -> list[IPAddress]:
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeTarget(NO_ANSWER_FROM_DNS.say(host=host, detail=exc)) from None
    found = dict.fromkeys(ip_address(str(info[4][0]).split("%")[0]) for info in infos)
    if not found:
        raise UnsafeTarget(DOES_NOT_RESOLVE.say(host=host))
    return list(found)
