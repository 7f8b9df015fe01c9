"""Custom tracking domains: a workspace's own hosts for its links, clicks and token-less postbacks.

A new domain is pending and routes nothing. Its workspace proves control by publishing its token
in a DNS TXT record at ``_trilha.<host>`` and asking to verify. DNS is the proof: a host may be
pending in several workspaces (so adding one reveals nothing about the others), and the workspace
whose token the record holds gets it verified, taking it from any other. Verified domains are
looked at again daily; one whose record keeps failing for :data:`GRACE` is pending again, so a DNS
hiccup never cuts live traffic. The public host of the instance, localhost and IP addresses are
never custom domains.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from ipaddress import ip_address
from urllib.parse import urlsplit

import dns.asyncresolver
import dns.exception
import dns.resolver
from sqlalchemy import Row, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.db.schema import campaigns, domains
from trilha.errors import Conflict, InvalidInput, NotFound
from trilha.ids import new_id, new_secret
from trilha.settings import Settings
from trilha.validation import HOST, optional_http_url, require_host
from trilha.workspaces import Workspace

log = logging.getLogger(__name__)

RECORD_PREFIX = "_trilha."
RECHECK_AFTER = timedelta(days=1)
GRACE = timedelta(days=7)  # of failed checks before a verified domain is pending again
DNS_TIMEOUT = 2.0  # seconds per nameserver try
DNS_LIFETIME = 4.0  # seconds for the whole lookup
RECHECK_BATCH = 100  # domains per maintenance round
MAX_HOST_LENGTH = 260  # a domain name's 253 characters, with room for a final dot and spaces
LOST = "another workspace proved control of this domain; verify it again"


class DomainStatus(StrEnum):
    PENDING = "pending"  # routes nothing until its TXT record is verified
    VERIFIED = "verified"


class CheckResult(StrEnum):
    VERIFIED = "verified"
    NO_RECORD = "no_record"
    WRONG_VALUE = "wrong_value"
    DNS_ERROR = "dns_error"


@dataclass(frozen=True, slots=True)
class Check:
    """What one look at a domain's TXT record found; reason says why it proves nothing."""

    result: CheckResult
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Domain:
    id: str
    host: str
    fallback_url: str | None
    created_at: datetime
    status: DomainStatus
    verification_token: str
    verified_at: datetime | None = None
    checked_at: datetime | None = None
    check_error: str | None = None
    failing_since: datetime | None = None

    @property
    def record_name(self) -> str:
        """Where the TXT record holding :attr:`verification_token` goes."""
        return RECORD_PREFIX + self.host


@dataclass(frozen=True, slots=True)
class DomainPolicy:
    """The instance's rules for custom domains, from its settings."""

    reserved_hosts: frozenset[str]
    needs_proof: bool = True
    nameserver: str | None = None  # None: the system's resolvers
    port: int = 53

    @classmethod
    def from_settings(cls, settings: Settings) -> DomainPolicy:
        public = (urlsplit(settings.base_url).hostname or "").rstrip(".")
        twin = public.removeprefix("www.") if public.startswith("www.") else f"www.{public}"
        return cls(
            reserved_hosts=frozenset({public, twin, *settings.reserved_hosts}),
            needs_proof=settings.domain_verification,
            nameserver=settings.dns_nameserver,
            port=settings.dns_port,
        )

    def require_host(self, value: str) -> str:
        """A host that may be a custom domain, normalised; InvalidInput says why not."""
        host = value.strip().lower().rstrip(".")
        if _is_address(host):
            raise InvalidInput(
                {"host": "an IP address cannot be a custom domain; use a domain name"}
            )
        if host == "localhost" or host.endswith(".localhost"):
            raise InvalidInput({"host": "localhost names cannot be custom domains"})
        host = require_host(host)
        if host in self.reserved_hosts:
            raise InvalidInput(
                {"host": "this is the address of this trilha server; it cannot be a custom domain"}
            )
        return host


def certificate_host(value: str) -> str | None:
    """The domain name a TLS certificate is asked for, normalised; None when it is no domain name
    (too long, an IP address, a wildcard, a port): no such name gets a certificate."""
    if len(value) > MAX_HOST_LENGTH:
        return None
    host = value.strip().lower().rstrip(".")
    return host if HOST.fullmatch(host) and not _is_address(host) else None


async def may_have_certificate(conn: AsyncConnection, host: str, *, public_host: str) -> bool:
    """Whether the proxy in front may get a certificate for ``host`` (from certificate_host): the
    instance's public host, or a custom domain verified in any workspace. Anything else stays
    without one, so no one can make the server ask a certificate authority for arbitrary names."""
    if host == public_host:
        return True
    verified = select(domains.c.id).where(
        domains.c.host == host, domains.c.status == DomainStatus.VERIFIED
    )
    return (await conn.execute(verified.limit(1))).first() is not None


def _is_address(host: str) -> bool:
    """IPv4 or IPv6, bracketed or not, or a name ending in digits (no top-level domain does)."""
    if host.rsplit(".", 1)[-1].isdigit():
        return True
    try:
        ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False
    return True


def _domain(row: Row[tuple[object, ...]]) -> Domain:
    fields = {name: getattr(row, name) for name in Domain.__dataclass_fields__}
    return Domain(**{**fields, "status": DomainStatus(row.status)})


async def add_domain(
    conn: AsyncConnection,
    workspace: Workspace,
    *,
    host: str,
    fallback_url: str | None = None,
    policy: DomainPolicy,
    now: datetime,
) -> Domain:
    """A new domain: pending until verified, unless the instance verifies them at once."""
    host = policy.require_host(host)
    fallback_url = optional_http_url(fallback_url, "fallback_url")
    mine = select(domains.c.id).where(
        domains.c.workspace_id == workspace.id, domains.c.host == host
    )
    if (await conn.execute(mine)).first() is not None:
        raise Conflict("this domain is already in this workspace", field="host")
    domain = Domain(
        id=new_id(),
        host=host,
        fallback_url=fallback_url,
        created_at=now,
        status=DomainStatus.PENDING if policy.needs_proof else DomainStatus.VERIFIED,
        verification_token=new_secret(),
        verified_at=None if policy.needs_proof else now,
    )
    try:
        async with conn.begin_nested():
            await conn.execute(domains.insert().values(workspace_id=workspace.id, **asdict(domain)))
    except IntegrityError:
        # Only without verification: a host verified elsewhere cannot be verified here too.
        raise Conflict("this domain is already in use", field="host") from None
    return domain


async def list_domains(conn: AsyncConnection, workspace: Workspace) -> list[Domain]:
    rows = await conn.execute(
        select(domains).where(domains.c.workspace_id == workspace.id).order_by(domains.c.host)
    )
    return [_domain(row) for row in rows]


async def get_domain(conn: AsyncConnection, workspace: Workspace, domain_id: str) -> Domain:
    row = (
        await conn.execute(
            select(domains).where(domains.c.id == domain_id, domains.c.workspace_id == workspace.id)
        )
    ).first()
    if row is None:
        raise NotFound("domain not found")
    return _domain(row)


async def update_domain(
    conn: AsyncConnection, workspace: Workspace, domain_id: str, *, fallback_url: str | None
) -> Domain:
    await get_domain(conn, workspace, domain_id)
    await conn.execute(
        update(domains)
        .where(domains.c.id == domain_id)
        .values(fallback_url=optional_http_url(fallback_url, "fallback_url"))
    )
    return await get_domain(conn, workspace, domain_id)


async def delete_domain(conn: AsyncConnection, workspace: Workspace, domain_id: str) -> None:
    domain = await get_domain(conn, workspace, domain_id)
    in_use = (
        await conn.execute(
            select(func.count())
            .select_from(campaigns)
            .where(campaigns.c.workspace_id == workspace.id, campaigns.c.host == domain.host)
        )
    ).scalar_one()
    if in_use:
        raise Conflict(f"{in_use} campaign(s) still use this domain; move them first")
    await conn.execute(delete(domains).where(domains.c.id == domain_id))


async def look_up_record(domain: Domain, policy: DomainPolicy) -> Check:
    """Whether the TXT record at the domain's record name holds its token."""
    if not policy.needs_proof:
        return Check(CheckResult.VERIFIED)
    name = domain.record_name
    try:
        resolver = dns.asyncresolver.Resolver(configure=policy.nameserver is None)
        if policy.nameserver is not None:
            resolver.nameservers = [policy.nameserver]
            resolver.port = policy.port
        resolver.timeout, resolver.lifetime = DNS_TIMEOUT, DNS_LIFETIME
        answer = await resolver.resolve(name + ".", "TXT", search=False)
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return Check(CheckResult.NO_RECORD, f"there is no TXT record at '{name}'")
    except dns.exception.DNSException as exc:
        return Check(CheckResult.DNS_ERROR, f"the DNS lookup of '{name}' failed: '{_why(exc)}'")
    values = {b"".join(rdata.strings).decode("utf-8", "replace") for rdata in answer}
    if domain.verification_token in values:
        return Check(CheckResult.VERIFIED)
    return Check(
        CheckResult.WRONG_VALUE, f"the TXT record at '{name}' does not hold this domain's token"
    )


def _why(exc: dns.exception.DNSException) -> str:
    if isinstance(exc, dns.exception.Timeout):
        return "no answer in time"
    if isinstance(exc, dns.resolver.NoNameservers):
        return "no nameserver answered"
    return type(exc).__name__


async def record_check(
    conn: AsyncConnection, domain_id: str, check: Check, *, now: datetime, recheck: bool = False
) -> Domain:
    """Store what a check found: verified (taking the host from any other workspace), or the
    reason it failed; a verified domain failing for GRACE is pending again. A re-check leaves a
    domain that is no longer verified (another workspace took it meanwhile) as it is."""
    row = (await conn.execute(select(domains).where(domains.c.id == domain_id))).first()
    if row is None:
        raise NotFound("domain not found")
    domain = _domain(row)
    if recheck and domain.status is not DomainStatus.VERIFIED:
        return domain
    values: dict[str, object] = {"checked_at": now, "check_error": check.reason}
    if check.result is CheckResult.VERIFIED:
        values |= {"status": DomainStatus.VERIFIED, "failing_since": None}
        values["verified_at"] = domain.verified_at or now
        lose = (
            update(domains)
            .where(
                domains.c.host == domain.host,
                domains.c.status == DomainStatus.VERIFIED,
                domains.c.id != domain.id,
            )
            .values(status=DomainStatus.PENDING, verified_at=None, failing_since=None)
            .values(check_error=LOST)
        )
        try:
            async with conn.begin_nested():
                await conn.execute(lose)
                await conn.execute(update(domains).where(domains.c.id == domain.id).values(values))
        except IntegrityError:
            raise Conflict("this domain was verified at the same moment; try again") from None
        return _domain_with(domain, values)
    if domain.status is DomainStatus.VERIFIED:
        failing_since = domain.failing_since or now
        values["failing_since"] = failing_since
        if now - failing_since >= GRACE:
            values |= {"status": DomainStatus.PENDING, "verified_at": None, "failing_since": None}
            log.warning("custom domain %s is pending again: %s", domain.host, check.reason)
    await conn.execute(update(domains).where(domains.c.id == domain.id).values(values))
    return _domain_with(domain, values)


def _domain_with(domain: Domain, values: dict[str, object]) -> Domain:
    fields = asdict(domain) | values
    return Domain(**{**fields, "status": DomainStatus(str(fields["status"]))})


async def verify_domain(
    engine: AsyncEngine, domain: Domain, *, policy: DomainPolicy, now: datetime
) -> tuple[Domain, Check]:
    """Look at the domain's TXT record and store what was found. The lookup holds no transaction
    (on SQLite: no write lock), so the caller must hold none either."""
    check = await look_up_record(domain, policy)
    async with engine.begin() as conn:
        return await record_check(conn, domain.id, check, now=now), check


async def recheck_domains(engine: AsyncEngine, *, policy: DomainPolicy, now: datetime) -> int:
    """Look again at verified domains not checked for RECHECK_AFTER; how many were looked at."""
    if not policy.needs_proof:
        return 0
    due = (
        select(domains)
        .where(
            domains.c.status == DomainStatus.VERIFIED,
            or_(domains.c.checked_at.is_(None), domains.c.checked_at <= now - RECHECK_AFTER),
        )
        .order_by(domains.c.checked_at.asc().nulls_first())
        .limit(RECHECK_BATCH)
    )
    async with engine.begin() as conn:
        rows = [_domain(row) for row in await conn.execute(due)]
    for domain in rows:
        check = await look_up_record(domain, policy)
        if check.reason is not None:
            log.warning("custom domain %s failed its daily check: %s", domain.host, check.reason)
        with suppress(NotFound):  # removed while its record was looked at
            async with engine.begin() as conn:
                await record_check(conn, domain.id, check, now=now, recheck=True)
    return len(rows)
