"""The daily re-check of verified custom domains, and the grace before a failing one lapses."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dns_server import DnsServer
from tests.factories import fetch_all, make_campaign, make_domain, make_workspace
from trilha import maintenance
from trilha.custom_domains import DomainPolicy, recheck_domains
from trilha.db.schema import domains
from trilha.settings import Settings

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
NO_RECORD = "there is no TXT record at '_trilha.go.example.com'"


async def test_it_rechecks_verified_domains_once_a_day(
    db: AsyncEngine, settings: Settings, dns_records: DnsServer
) -> None:
    policy = DomainPolicy.from_settings(settings)
    domain = await make_domain(db, await make_workspace(db), "go.example.com")
    pending = await make_domain(db, await make_workspace(db), "new.example.com", verified=False)
    dns_records.publish("_trilha.go.example.com", domain.verification_token)

    first = await recheck_domains(db, policy=policy, now=START)
    too_soon = await recheck_domains(db, policy=policy, now=START + DAY - timedelta(minutes=1))
    next_day = await recheck_domains(db, policy=policy, now=START + DAY)

    assert (first, too_soon, next_day) == (1, 0, 1)
    assert dns_records.questions == ["_trilha.go.example.com"] * 2
    rows = {row["id"]: row for row in await fetch_all(db, domains)}
    assert (rows[domain.id]["status"], rows[domain.id]["checked_at"]) == ("verified", START + DAY)
    assert rows[domain.id]["check_error"] is None
    assert (rows[pending.id]["status"], rows[pending.id]["checked_at"]) == ("pending", None)


async def test_a_failing_domain_keeps_routing_for_seven_days_then_is_pending(
    db: AsyncEngine, settings: Settings, client: httpx.AsyncClient
) -> None:
    policy = DomainPolicy.from_settings(settings)
    workspace = await make_workspace(db)
    await make_domain(db, workspace, "go.example.com")
    await make_campaign(db, workspace, slug="offer", host="go.example.com")

    seen: list[tuple[int, str, datetime | None, str | None]] = []
    for day in range(7):
        await recheck_domains(db, policy=policy, now=START + day * DAY)
        [row] = await fetch_all(db, domains)
        seen.append((day, row["status"], row["failing_since"], row["check_error"]))
    in_grace = await client.get("/r/offer", headers={"host": "go.example.com"})
    await recheck_domains(db, policy=policy, now=START + 7 * DAY)
    [lapsed] = await fetch_all(db, domains)
    after_grace = await client.get("/r/offer", headers={"host": "go.example.com"})

    assert seen == [(day, "verified", START, NO_RECORD) for day in range(7)]
    assert in_grace.status_code == 302
    assert (lapsed["status"], lapsed["verified_at"], lapsed["check_error"]) == (
        "pending",
        None,
        NO_RECORD,
    )
    assert after_grace.status_code == 404


async def test_a_record_back_within_the_grace_clears_the_failures(
    db: AsyncEngine, settings: Settings, dns_records: DnsServer
) -> None:
    policy = DomainPolicy.from_settings(settings)
    domain = await make_domain(db, await make_workspace(db), "go.example.com")
    dns_records.failing.add("_trilha.go.example.com")

    for day in range(6):
        await recheck_domains(db, policy=policy, now=START + day * DAY)
    dns_records.reset()
    dns_records.publish("_trilha.go.example.com", domain.verification_token)
    await recheck_domains(db, policy=policy, now=START + 6 * DAY)
    dns_records.reset()
    for day in range(7, 13):
        await recheck_domains(db, policy=policy, now=START + day * DAY)

    [row] = await fetch_all(db, domains)
    assert (row["status"], row["failing_since"]) == ("verified", START + 7 * DAY)
    assert row["check_error"] == NO_RECORD


async def test_it_rechecks_nothing_when_verification_is_off(
    db: AsyncEngine, settings: Settings, dns_records: DnsServer
) -> None:
    policy = DomainPolicy.from_settings(settings.model_copy(update={"domain_verification": False}))
    await make_domain(db, await make_workspace(db), "go.example.com")

    rechecked = await recheck_domains(db, policy=policy, now=START + 30 * DAY)

    assert rechecked == 0
    assert dns_records.questions == []
    [row] = await fetch_all(db, domains)
    assert (row["status"], row["checked_at"]) == ("verified", None)


def test_the_reserved_hosts_are_the_public_host_its_twin_and_the_operators_list() -> None:
    settings = Settings(
        public_url="https://www.Trilha.example.com/",
        reserved_hosts="Track.example.org., other.example.net",
        _env_file=None,
    )

    policy = DomainPolicy.from_settings(settings)

    assert policy.reserved_hosts == {
        "www.trilha.example.com",
        "trilha.example.com",
        "track.example.org",
        "other.example.net",
    }


def test_the_dns_nameserver_must_be_an_ip_address() -> None:
    assert Settings(dns_nameserver=" ::1 ", _env_file=None).dns_nameserver == "::1"
    with pytest.raises(ValidationError):
        Settings(dns_nameserver="dns.example.com", _env_file=None)


async def test_the_maintenance_loop_rechecks_domains(
    db: AsyncEngine, settings: Settings, dns_records: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(maintenance, "ORPHAN_INTERVAL", 0.01)
    domain = await make_domain(db, await make_workspace(db), "go.example.com")
    dns_records.publish("_trilha.go.example.com", domain.verification_token)
    loop = asyncio.create_task(maintenance.run_maintenance(db, settings))
    try:
        rows: list[dict[str, Any]] = []
        for _ in range(1000):  # up to ten seconds
            rows = [r for r in await fetch_all(db, domains) if r["checked_at"] is not None]
            if rows:
                break
            await asyncio.sleep(0.01)
    finally:
        loop.cancel()
        await asyncio.gather(loop, return_exceptions=True)

    assert dns_records.questions == ["_trilha.go.example.com"]
    assert (rows[0]["status"], rows[0]["check_error"]) == ("verified", None)
