"""Who clicked: IP (behind trusted proxies only), device, OS, browser, country, bot flag."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network
from socket import AF_INET, inet_pton
from typing import NamedTuple

import iptocc
import ua_parser
from is_bot import Bots

from trilha.db.bounds import bounded, max_lengths
from trilha.db.schema import clicks
from trilha.settings import Network

# Parsing a user agent and checking it against the bot list costs 0.3-0.7 ms (the list is
# one large regular expression; long in-app browser agents cost the most); a click of an agent seen
# before costs a dictionary lookup. Real traffic repeats a few thousand agents.
UA_CACHE_SIZE = 8192
IP_CACHE_SIZE = 1024
# The bot list of the isbot project (crawlers, link previews, ad reviewers, monitors, headless
# browsers, HTTP libraries), kept up to date by its maintainers: see docs/performance.md for how it
# was chosen. A flagged click is still stored and redirected, only counted apart.
BOTS = Bots()
TABLET_PATTERN = re.compile(r"ipad|tablet|kindle|silk/|playbook|sm-t\d|tab\b", re.IGNORECASE)
MOBILE_OS = frozenset({"Android", "iOS", "Windows Phone", "BlackBerry OS", "KaiOS", "HarmonyOS"})
_OS_LENGTH = max_lengths(clicks)["os"]
_BROWSER_LENGTH = max_lengths(clicks)["browser"]


@dataclass(frozen=True, slots=True)
class Device:
    device_type: str
    os: str
    browser: str
    is_bot: bool


class Visitor(NamedTuple):
    """Who clicked. A NamedTuple, as ClickRequest is: every click makes one."""

    ip: str
    user_agent: str
    referrer: str
    device: Device
    country: str

    def key(self, campaign_id: str) -> int:
        """Identifies the visitor on a campaign for uniqueness (see :func:`visitor_key`)."""
        return visitor_key(campaign_id, self.ip, self.user_agent)


def visitor_key(campaign_id: str, ip: str, user_agent: str) -> int:
    """A visitor (IP plus user agent) of one campaign, in 8 bytes: the first 64 bits of the MD5
    of the three, as a signed integer. Not a secret, only a compact key; MD5 because PostgreSQL
    computes it too (migration 0007 keyed the clicks stored before it in SQL).

    >>> visitor_key("c1", "203.0.113.9", "curl/8.5.0")
    -580813665050366704
    """
    text = f"{campaign_id}\n{ip}\n{user_agent}".encode()
    return int.from_bytes(hashlib.md5(text, usedforsecurity=False).digest()[:8], signed=True)


@lru_cache(maxsize=UA_CACHE_SIZE)
def agent_key(user_agent: str) -> int:
    """A user agent in 8 bytes, the key of its one row in ``user_agents`` (clicks hold the key):
    the first 64 bits of its MD5, signed, which PostgreSQL computes too (migration 0025 keyed the
    agents stored before it in SQL). Two agents sharing a key would need 2**32 distinct agents.
    Cached as parse_device is: a click of an agent seen before costs a dictionary lookup.

    >>> agent_key("curl/8.5.0")
    8533144562269371825
    """
    digest = hashlib.md5(user_agent.encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], signed=True)


@lru_cache(maxsize=UA_CACHE_SIZE)
def parse_device(user_agent: str) -> Device:
    """Classify a user agent; an empty one is a bot (browsers always send one). The names are
    cut to their columns' lengths: the parser takes them from the user agent, which a visitor
    writes (cut once here, since the result is cached).

    >>> parse_device("curl/8.5.0")
    Device(device_type='bot', os='Other', browser='curl', is_bot=True)
    """
    result = ua_parser.parse(user_agent)
    browser = bounded(result.user_agent.family, _BROWSER_LENGTH) if result.user_agent else "Other"
    os_name = bounded(result.os.family, _OS_LENGTH) if result.os else "Other"
    device_family = result.device.family if result.device else "Other"
    # An empty agent is ours: no browser sends one, and the list leaves it alone.
    is_bot = not user_agent.strip() or device_family == "Spider" or BOTS.is_bot(user_agent)
    if is_bot:
        device_type = "bot"
    elif TABLET_PATTERN.search(user_agent):
        device_type = "tablet"
    elif os_name in MOBILE_OS or "Mobile" in user_agent:
        device_type = "mobile"
    else:
        device_type = "desktop"
    return Device(device_type=device_type, os=os_name, browser=browser, is_bot=is_bot)


def client_ip(peer: str, forwarded_for: str | None, trusted: Sequence[Network]) -> str:
    """The visitor's address: walk X-Forwarded-For from the right while hops are trusted.

    >>> from ipaddress import ip_network
    >>> client_ip("10.0.0.2", "203.0.113.9, 10.0.0.1", [ip_network("10.0.0.0/8")])
    '203.0.113.9'
    """
    return TrustedProxies(trusted).client_ip(peer, forwarded_for)


class TrustedProxies:
    """The proxies whose X-Forwarded-For is believed, made once per process for the hot paths:
    the IPv4 networks as integers, and whether each connecting peer (a proxy's address comes
    with every request) is trusted, remembered for the last ``IP_CACHE_SIZE`` peers."""

    def __init__(self, trusted: Sequence[Network]) -> None:
        self._trusted = tuple(trusted)
        # Each trusted IPv4 network as its address and mask in one integer.
        self._ipv4 = tuple(
            (int(net.network_address), int(net.netmask)) for net in trusted if net.version == 4
        )
        self._peers: dict[str, tuple[str, bool] | None] = {}

    def client_ip(self, peer: str, forwarded_for: str | None) -> str:
        """The visitor's address (see :func:`client_ip`)."""
        if forwarded_for is None or not self._trusted:
            return peer[:45]  # the server's own reading of the connection
        seen = self._peer(peer)
        if seen is None:
            return peer[:45]
        text, trusted = seen
        if not trusted:
            return text
        ipv4 = self._ipv4
        for hop in reversed(forwarded_for.split(",")):
            hop = hop.strip()
            try:
                packed = inet_pton(AF_INET, hop)
            except (OSError, ValueError):  # not IPv4: read as _read_ip reads it
                read = _read_ip(hop)
                if read is None:
                    break
                address, text = read
                if not _is_trusted(address, self._trusted):
                    break
                continue
            # IPv4, spelled as ipaddress spells it (see _read_ip): each visitor's own address,
            # checked without an IPv4Address, nor a place in _read_ip's cache.
            text = hop
            number = int.from_bytes(packed)
            for network, mask in ipv4:
                if number & mask == network:
                    break
            else:
                break
        return text

    def _peer(self, peer: str) -> tuple[str, bool] | None:
        """The peer's usual spelling and whether it is trusted; None when it is no address."""
        try:
            return self._peers[peer]
        except KeyError:
            pass
        read = _read_ip(peer)
        seen = None if read is None else (read[1], _is_trusted(read[0], self._trusted))
        if len(self._peers) >= IP_CACHE_SIZE:
            self._peers.clear()
        self._peers[peer] = seen
        return seen


class CountryLookup:
    """Country of an IP from the built-in table, or from a user-supplied MaxMind database."""

    def __init__(self, mmdb_path: str | None = None) -> None:
        self._reader = None
        if mmdb_path:
            import maxminddb

            self._reader = maxminddb.open_database(mmdb_path)

    def __call__(self, ip: str) -> str:
        try:
            if self._reader is not None:
                record = self._reader.get(ip)
                country = record.get("country", {}) if isinstance(record, dict) else {}
                return str(country.get("iso_code", "")) if isinstance(country, dict) else ""
            return str(iptocc.country_code(ip) or "")
        except ValueError:
            return ""

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()


@lru_cache(maxsize=IP_CACHE_SIZE)
def _read_ip(text: str) -> tuple[IPv4Address | IPv6Address, str] | None:
    """The address ``text`` spells and its usual spelling, or None. An IPv4 address the
    system's parser takes is already spelled so (it refuses leading zeros, as ``ipaddress``
    does), and reading it there costs a tenth of ``ip_address``: every click reads one or two.
    Kept for the last addresses: a proxy's comes with every request.

    >>> _read_ip("203.0.113.9"), _read_ip("2001:DB8::1"), _read_ip("01.2.3.4")
    ((IPv4Address('203.0.113.9'), '203.0.113.9'), (IPv6Address('2001:db8::1'), '2001:db8::1'), None)
    """
    try:
        return IPv4Address(inet_pton(AF_INET, text)), text
    except (OSError, ValueError):  # not IPv4 (ValueError: a NUL in it)
        pass
    try:
        address = ip_address(text)
    except ValueError:
        return None
    return address, str(address)


def _is_trusted(address: IPv4Address | IPv6Address, trusted: Sequence[Network]) -> bool:
    return any(address.version == net.version and address in net for net in trusted)


def address_block(ip: str) -> str:
    """What one sender is known by: its IPv4 address (also when mapped into IPv6), or its IPv6
    address's /64, which one machine often holds whole; what does not parse, as it is.

    >>> address_block("2001:db8:1:2:3:4:5:6"), address_block("::ffff:203.0.113.9")
    ('2001:db8:1:2::/64', '203.0.113.9')
    """
    try:
        address = ip_address(ip)
    except ValueError:  # the server's own reading of an unusual peer
        return ip
    if isinstance(address, IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ip_network(f"{address}/64", strict=False))
    return str(address)
