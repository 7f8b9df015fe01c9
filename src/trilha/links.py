"""Tracking links: which campaign a host and slug name, and where the visitor goes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection

from trilha.db.driver import fetch_one
from trilha.dimensions import DIMENSIONS

DEFAULT_HOST = ""
_DIMENSIONS = frozenset(DIMENSIONS)


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
    currency: str = "BRL"  # the workspace's: a click URL's cost is in it
    # The query parameters that fill a click column; the others are kept in its params.
    consumed: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "consumed", _consumed(self.source_params))


@dataclass(frozen=True, slots=True)
class Fallback:
    """No active campaign: send the visitor here, or show a 404 page when url is None."""

    url: str | None
    reason: str


# The verified custom domain the host names (if any), and the campaign its slug names there (or
# on the shared default host when the host is no verified custom domain), in one round trip.
# Pending domains route nothing; a campaign left on a host that another workspace has since
# verified routes nothing either. The literal status lets both databases use the partial index.
LINK_SQL = """
SELECT d.host, COALESCE(d.fallback_url, dw.fallback_url),
       c.id, c.workspace_id, c.name, c.offer_url, c.source_id, c.status, c.fallback_url,
       s.name, CAST(s.params AS TEXT), w.timezone, w.currency
FROM (SELECT CAST(:host AS TEXT) AS host, CAST(:slug AS TEXT) AS slug) AS asked
LEFT JOIN domains AS d ON d.host = asked.host AND d.status = 'verified'
LEFT JOIN workspaces AS dw ON dw.id = d.workspace_id
LEFT JOIN campaigns AS c ON c.host = COALESCE(d.host, '') AND c.slug = asked.slug
    AND c.workspace_id = COALESCE(d.workspace_id, c.workspace_id)
LEFT JOIN workspaces AS w ON w.id = c.workspace_id
LEFT JOIN traffic_sources AS s ON s.id = c.source_id
"""


def resolve_link(conn: Connection, *, host: str, slug: str) -> Link | Fallback:
    """Find the campaign behind ``host/r/slug``; custom domains have their own slugs."""
    return link_from_row(fetch_one(conn, LINK_SQL, {"host": host, "slug": slug}), slug)


@lru_cache(maxsize=256)
def link_from_row(row: tuple[Any, ...], slug: str) -> Link | Fallback:
    """The link a row of LINK_SQL describes; cached, since a campaign's clicks share its row."""
    (_domain, domain_fallback, campaign_id, workspace_id, name, offer_url, source_id) = row[:7]
    (status, fallback_url, source_name, source_params, timezone, currency) = row[7:]
    if campaign_id is None:
        return Fallback(domain_fallback, "unknown link")
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
        currency=currency,
    )


def _source_params(value: str | None) -> tuple[tuple[str, str], ...]:
    if not value:
        return ()
    return tuple((str(item["param"]), str(item["field"])) for item in json.loads(value))


@lru_cache(maxsize=256)
def _consumed(source_params: tuple[tuple[str, str], ...]) -> frozenset[str]:
    return _DIMENSIONS.union(param for param, _ in source_params)
