"""Properties of the visitor's address: whatever X-Forwarded-For and the peer say, trilha reads
them as the ``ipaddress`` module does (its quicker reading of IPv4 included): the same address,
spelled the same way, and a hop it refuses ends the walk."""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import ip_address, ip_network

from hypothesis import given
from hypothesis import strategies as st

from trilha.settings import Network
from trilha.visitors import client_ip

PROXIES = [ip_network("10.0.0.0/8"), ip_network("::1/128"), ip_network("2001:db8::/32")]
OCTET = st.integers(0, 300).map(str) | st.sampled_from(["00", "01", "007", "", " 1", "1 ", "+1"])
HOP = (
    st.lists(OCTET, min_size=3, max_size=5).map(".".join)
    | st.ip_addresses().map(str)
    | st.ip_addresses(v=6).map(lambda a: str(a).upper())
    | st.ip_addresses(v=6).map(lambda a: a.exploded)
    | st.sampled_from(["10.1.2.3", "::1", "::ffff:10.0.0.1", "::ffff:203.0.113.9", "1.2.3.4\x00"])
    | st.text(st.sampled_from("0123456789.:abcdefABCDEF x%"), max_size=45)
)


def reference(peer: str, forwarded_for: str, trusted: Sequence[Network]) -> str:
    """What client_ip promises, spelled out over ``ipaddress`` alone."""

    def read(text: str) -> str | None:
        try:
            return str(ip_address(text))
        except ValueError:
            return None

    def is_trusted(text: str) -> bool:
        address = ip_address(text)
        return any(address.version == n.version and address in n for n in trusted)

    address = read(peer)
    if address is None:
        return peer[:45]
    if not is_trusted(address):
        return address
    for hop in reversed(forwarded_for.split(",")):
        hop_address = read(hop.strip())
        if hop_address is None:
            break
        address = hop_address
        if not is_trusted(address):
            break
    return address


@given(HOP, st.lists(HOP, min_size=1, max_size=4).map(", ".join))
def test_it_reads_the_visitors_address_as_ipaddress_does(peer: str, forwarded_for: str) -> None:
    assert client_ip(peer, forwarded_for, PROXIES) == reference(peer, forwarded_for, PROXIES)


@given(HOP)
def test_a_trusted_peer_passes_any_hop_on_as_ipaddress_spells_it(hop: str) -> None:
    assert client_ip("10.0.0.1", hop, PROXIES) == reference("10.0.0.1", hop, PROXIES)
