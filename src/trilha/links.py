"""Tracking links: which campaign a host and slug name, and where the visitor goes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import campaigns, domains, traffic_sources, workspaces

DEFAULT_HOST = ""


@dataclass(frozen=True, slots=True)
class Link:
    """An active campaign, with what the redirect needs to record and fill macros."""

    campaign_id: str
    workspace_id: str
    name: str
    slug: str
    offer_url: str
    source_id: str | None
    source_name: str
    source_params: tuple[tuple[str, str], ...]  # (query parameter, click field)
    timezone: str


@dataclass(frozen=True, slots=True)
class Fallback:
    """No active campaign: send the visitor here, or show a 404 page when url is None."""

    url: str | None
    reason: str


# Built once: SQLAlchemy compiles each a single time, and a batch of clicks does not build them.
_DOMAIN = (
    select(domains.c.host, domains.c.fallback_url, workspaces.c.fallback_url)
    .join(workspaces, workspaces.c.id == domains.c.workspace_id)
    .where(domains.c.host == bindparam("host"))
)
_CAMPAIGN = (
    select(
        campaigns.c.id,
        campaigns.c.workspace_id,
        campaigns.c.name,
        campaigns.c.offer_url,
        campaigns.c.source_id,
        campaigns.c.status,
        campaigns.c.fallback_url,
        traffic_sources.c.name,
        traffic_sources.c.params,
        workspaces.c.timezone,
    )
    .join(workspaces, workspaces.c.id == campaigns.c.workspace_id)
    .outerjoin(traffic_sources, traffic_sources.c.id == campaigns.c.source_id)
    .where(campaigns.c.host == bindparam("host"), campaigns.c.slug == bindparam("slug"))
)


async def resolve_link(conn: AsyncConnection, *, host: str, slug: str) -> Link | Fallback:
    """Find the campaign behind ``host/r/slug``; custom domains have their own slugs."""
    domain = (await conn.execute(_DOMAIN, {"host": host})).first()
    link_host = DEFAULT_HOST if domain is None else domain[0]
    domain_fallback = None if domain is None else (domain[1] or domain[2])
    row = (await conn.execute(_CAMPAIGN, {"host": link_host, "slug": slug})).first()
    if row is None:
        return Fallback(domain_fallback, "unknown link")
    (campaign_id, workspace_id, name, offer_url, source_id, status, fallback_url) = row[:7]
    source_name, source_params, timezone = row[7:]
    if status != "active":
        return Fallback(fallback_url or domain_fallback, "campaign paused")
    return Link(
        campaign_id=campaign_id,
        workspace_id=workspace_id,
        name=name,
        slug=slug,
        offer_url=offer_url,
        source_id=source_id,
        source_name=source_name or "",
        source_params=_source_params(source_params),
        timezone=timezone,
    )


def _source_params(value: Any) -> tuple[tuple[str, str], ...]:
    if not value:
        return ()
    return tuple((str(item["param"]), str(item["field"])) for item in value)
