"""Outbound safety: with private addresses not allowed (the default), no request reaches
loopback, private, link-local, shared or mapped addresses, whatever the URL says; a canary on
127.0.0.1 (and ::1) sees no connection."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from ipaddress import ip_address

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import settings_for
from tests.deliveries.conftest import make_destination
from tests.deliveries.receiver import Canary, Receiver
from tests.dns_server import DnsServer
from tests.factories import fetch_all, make_workspace
from trilha.db.schema import destinations
from trilha.deliveries.destinations import Spec
from trilha.deliveries.jobs import OutboundRequest
from trilha.deliveries.kinds import AttemptOutcome, Kind
from trilha.deliveries.safety import resolve_target
from trilha.deliveries.send import Policy, new_client, send
from trilha.settings import Settings

CLOSED = Policy(timeout=2.0, response_limit=65536, allow_private=False)


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return settings_for(database_url, dns_server)  # private addresses refused, as installed


@pytest.fixture
def canary6() -> Iterator[Canary]:
    port = Canary("::1")
    yield port
    port.close()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/pb",
        "http://localhost:{port}/pb",  # a name that resolves to a loopback address
        "http://[::ffff:127.0.0.1]:{port}/pb",
        "http://0.0.0.0:{port}/pb",
        "http://127.1:{port}/pb",
        "http://2130706433:{port}/pb",  # 127.0.0.1 as one number
    ],
)
async def test_it_refuses_loopback_in_every_spelling(url: str, canary: Canary) -> None:
    async with new_client(CLOSED) as client:
        sent = await send(
            client, OutboundRequest("GET", url.format(port=canary.port)), CLOSED, now=_now()
        )

    assert sent.outcome is AttemptOutcome.REFUSED
    assert "not a public address" in sent.error or "does not resolve" in sent.error
    assert canary.connections == 0


async def test_it_refuses_ipv6_loopback(canary6: Canary) -> None:
    async with new_client(CLOSED) as client:
        sent = await send(
            client, OutboundRequest("GET", f"http://[::1]:{canary6.port}/"), CLOSED, now=_now()
        )

    assert sent.outcome is AttemptOutcome.REFUSED
    assert sent.error == "::1 resolves to ::1, which is not a public address"
    assert canary6.connections == 0


@pytest.mark.parametrize(
    "address",
    [
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "224.0.0.1",
        "240.0.0.1",
        "[fe80::1]",
        "[fc00::1]",
        "[::ffff:10.0.0.1]",
        "[2002:7f00:1::1]",  # 6to4 of 127.0.0.1
        "[2002:a9fe:a9fe::]",  # 6to4 of 169.254.169.254
        "[2001:0:5db8:d822::80ff:fffe]",  # Teredo: public server, client 127.0.0.1
        "[2001:0:a9fe:a9fe::a2c5:a2c5]",  # Teredo: server 169.254.169.254, public client
    ],
)
async def test_it_refuses_private_and_reserved_addresses(address: str) -> None:
    async with new_client(CLOSED) as client:
        sent = await send(client, OutboundRequest("GET", f"http://{address}/"), CLOSED, now=_now())

    assert sent.outcome is AttemptOutcome.REFUSED
    assert sent.error.endswith("which is not a public address")
    assert sent.latency_ms == 0  # refused before any connection was tried


async def test_a_destination_on_a_private_address_fails_its_check(
    db: AsyncEngine, settings: Settings, canary: Canary
) -> None:
    workspace = await make_workspace(db)
    url = f"http://localhost:{canary.port}/pb?cid={{sub1}}"

    destination = await make_destination(
        db, workspace, Spec("Internal", Kind.POSTBACK, url), settings=settings
    )

    [row] = await fetch_all(db, destinations, id=destination.id)
    assert row["status"] == "inactive"
    assert row["status_reason"].startswith("address check failed: localhost resolves to ")
    assert canary.connections == 0


async def test_a_destination_on_a_6to4_address_of_the_metadata_service_fails_its_check(
    db: AsyncEngine, settings: Settings
) -> None:
    workspace = await make_workspace(db)
    url = "http://[2002:a9fe:a9fe::]/latest/meta-data/?cid={sub1}"

    destination = await make_destination(
        db, workspace, Spec("Metadata", Kind.POSTBACK, url), settings=settings
    )

    [row] = await fetch_all(db, destinations, id=destination.id)
    assert row["status"] == "inactive"
    assert row["status_reason"] == (
        "address check failed: 2002:a9fe:a9fe:: resolves to 2002:a9fe:a9fe::, "
        "which is not a public address"
    )


async def test_it_lets_a_6to4_address_of_a_public_ipv4_one_through() -> None:
    target = await resolve_target("http://[2002:5db8:d822::1]/pb", allow_private=False)

    assert target.address == ip_address("2002:5db8:d822::1")  # 93.184.216.34


async def test_it_connects_to_the_checked_address_naming_the_host(receiver: Receiver) -> None:
    opened = Policy(timeout=2.0, response_limit=65536, allow_private=True)
    async with new_client(opened) as client:
        sent = await send(
            client,
            OutboundRequest("GET", f"http://localhost:{receiver.port}/ok?x=1"),
            opened,
            now=_now(),
        )

    assert sent.outcome is AttemptOutcome.SUCCESS
    [request] = receiver.at("/ok")
    assert request.headers["host"] == f"localhost:{receiver.port}"


async def test_it_reads_no_more_of_an_answer_than_the_limit(receiver: Receiver) -> None:
    small = Policy(timeout=2.0, response_limit=1024, allow_private=True)
    async with new_client(small) as client:
        sent = await send(client, OutboundRequest("GET", receiver.url("/big")), small, now=_now())

    assert sent.outcome is AttemptOutcome.SUCCESS
    assert len(sent.response) == 1000  # the excerpt kept, from the first 1024 bytes read


def _now() -> datetime:
    return datetime.now(UTC)
