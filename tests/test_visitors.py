"""Who clicked: the visitor's IP behind trusted proxies, country, device and bot flag."""

from __future__ import annotations

import random
from ipaddress import IPv4Address, IPv6Address, ip_address, ip_network
from pathlib import Path

import httpx
import pytest
from mmdb_writer import MMDBWriter
from netaddr import IPSet
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign, make_workspace
from trilha.app import create_app
from trilha.settings import Network, Settings
from trilha.visitors import CountryLookup, TrustedProxies, client_ip, parse_device

PROXIES = [ip_network("10.0.0.0/8"), ip_network("::1/128")]
# Real browsers (in-app ones included) and real bots, labelled by hand.
LABELLED_AGENTS = [
    (label, agent)
    for label, agent in (
        line.split("\t", 1)
        for line in (Path(__file__).parent / "data" / "user_agents.tsv").read_text().splitlines()
        if line and not line.startswith("#")
    )
]


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("203.0.113.9", "1.2.3.4", "203.0.113.9"),  # the peer is no proxy: header ignored
        ("10.0.0.2", "200.147.67.142", "200.147.67.142"),
        ("10.0.0.2", "6.6.6.6, 200.147.67.142, 10.0.0.5", "200.147.67.142"),  # spoofed left part
        ("10.0.0.2", "garbage, 10.0.0.3", "10.0.0.3"),
        ("10.0.0.2", None, "10.0.0.2"),
        ("::1", "2001:db8::1", "2001:db8::1"),
    ],
)
def test_it_believes_x_forwarded_for_only_from_trusted_proxies(
    peer: str, forwarded: str | None, expected: str
) -> None:
    assert client_ip(peer, forwarded, PROXIES) == expected


def _client_ip_by_ipaddress(peer: str, forwarded: str, trusted: list[Network]) -> str:
    """client_ip as it reads with ipaddress alone, every hop an address object."""

    def read(text: str) -> tuple[IPv4Address | IPv6Address, str] | None:
        if text.count(".") == 3 and all(
            p.isdigit() and (p == "0" or p[0] != "0") for p in text.split(".")
        ):
            try:
                return IPv4Address(text), text
            except ValueError:
                return None
        try:
            address = ip_address(text)
        except ValueError:
            return None
        return address, str(address)

    def is_trusted(address: IPv4Address | IPv6Address) -> bool:
        return any(address.version == net.version and address in net for net in trusted)

    first = read(peer)
    if first is None:
        return peer[:45]
    address, text = first
    if not is_trusted(address):
        return text
    for hop in reversed(forwarded.split(",")):
        hop_read = read(hop.strip())
        if hop_read is None:
            break
        address, text = hop_read
        if not is_trusted(address):
            break
    return text


def test_x_forwarded_for_reads_as_with_ipaddress_alone() -> None:
    rng = random.Random(29)
    networks: list[Network] = [
        ip_network("10.0.0.0/8"),
        ip_network("192.168.7.0/24"),
        ip_network("203.0.113.5/32"),
        ip_network("::1/128"),
        ip_network("2001:db8::/32"),
    ]
    hops = [
        lambda: f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}",
        lambda: f"192.168.{rng.choice([6, 7, 8])}.{rng.randrange(256)}",
        lambda: rng.choice(["203.0.113.5", "203.0.113.6", "0.0.0.0", "255.255.255.255"]),  # noqa: S104
        lambda: (
            f"{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}"
        ),
        lambda: rng.choice(
            ["::1", "2001:db8::7", "2001:DB8:0::9", "2001:db9::1", "::ffff:10.0.0.1"]
        ),
        lambda: rng.choice(
            ["", "garbage", "01.2.3.4", "10.0.0.256", "1.2.3", "10.0.0.1\x00", "unknown"]
        ),
    ]
    # The hot paths keep one TrustedProxies, which remembers each peer: kept here too.
    kept: dict[tuple[Network, ...], TrustedProxies] = {}
    for _ in range(5000):
        trusted = rng.sample(networks, rng.randrange(1, len(networks) + 1))
        peer = rng.choice(["10.0.0.2", "::1", "198.51.100.1", "203.0.113.5", "::1%eth0", "x"])
        forwarded = ",".join(
            rng.choice(["", " ", "  "]) + rng.choice(hops)() + rng.choice(["", " "])
            for _ in range(rng.randrange(1, 5))
        )
        expected = _client_ip_by_ipaddress(peer, forwarded, trusted)
        assert client_ip(peer, forwarded, trusted) == expected, (peer, forwarded, trusted)
        proxies = kept.setdefault(tuple(trusted), TrustedProxies(trusted))
        assert proxies.client_ip(peer, forwarded) == expected, (peer, forwarded, trusted)


@pytest.mark.parametrize(
    ("agent", "device", "is_bot"),
    [
        (
            "Mozilla/5.0 (Linux; Android 14; SM-S911B) AppleWebKit/537.36 Chrome/120 Mobile",
            "mobile",
            False,
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
            "tablet",
            False,
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Version/17.0 Safari",
            "desktop",
            False,
        ),
        ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bot", True),
        ("WhatsApp/2.23.20.0 A", "bot", True),
        ("python-requests/2.31.0", "bot", True),
        ("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0.0.0 Safari/537.36", "bot", True),
        ("", "bot", True),
    ],
)
def test_it_classifies_devices_and_bots(agent: str, device: str, is_bot: bool) -> None:
    parsed = parse_device(agent)
    assert (parsed.device_type, parsed.is_bot) == (device, is_bot)


def test_the_labelled_sample_holds_browsers_and_bots() -> None:
    labels = [label for label, _ in LABELLED_AGENTS]
    assert set(labels) == {"human", "bot"}
    assert labels.count("human") >= 40
    assert labels.count("bot") >= 60


@pytest.mark.parametrize(("label", "agent"), LABELLED_AGENTS)
def test_it_flags_every_bot_of_the_labelled_sample_and_no_browser(label: str, agent: str) -> None:
    device = parse_device(agent)
    assert device.is_bot == (label == "bot")
    assert (device.device_type == "bot") == device.is_bot


def test_it_finds_the_country_in_the_built_in_table() -> None:
    lookup = CountryLookup()
    assert lookup("200.147.67.142") == "BR"
    assert lookup("8.8.8.8") == "US"
    assert lookup("127.0.0.1") == ""
    assert lookup("not an ip") == ""


def test_it_uses_a_user_supplied_maxmind_database(tmp_path: Path) -> None:
    path = tmp_path / "country.mmdb"
    writer = MMDBWriter(ip_version=6, database_type="GeoIP2-Country", ipv4_compatible=True)
    writer.insert_network(IPSet(["203.0.113.0/24"]), {"country": {"iso_code": "PT"}})
    writer.to_db_file(str(path))

    lookup = CountryLookup(str(path))
    try:
        assert lookup("203.0.113.7") == "PT"
        assert lookup("200.147.67.142") == ""  # not in this database
    finally:
        lookup.close()


async def test_the_redirect_records_the_forwarded_visitor_and_its_country(
    settings: Settings, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp", offer_url="https://o.example.com/?c={country}")
    app = create_app(settings.model_copy(update={"trusted_proxies": PROXIES}))
    app.runtime.start()
    try:
        transport = httpx.ASGITransport(app=app, client=("10.1.2.3", 1234))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            response = await http.get("/r/lp", headers={"x-forwarded-for": "200.147.67.142"})
    finally:
        await app.runtime.stop()

    assert response.headers["location"] == "https://o.example.com/?c=BR"
    [row] = await fetch_clicks(db)
    assert (row["ip"], row["country"]) == ("200.147.67.142", "BR")
