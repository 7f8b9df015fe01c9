"""Claiming due deliveries, and loading what their requests are built from.

A claim is one conditional UPDATE that sets a lease on due, unleased deliveries of active
destinations and returns their ids: on SQLite the statement holds the write lock, on PostgreSQL
``FOR UPDATE SKIP LOCKED`` lets workers claim side by side without waiting on each other. Either
way no delivery is claimed by two workers while its lease runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, Row, Table, and_, literal_column, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.status import Status
from trilha.currencies import convert
from trilha.db.schema import (
    campaigns,
    clicks,
    conversions,
    deliveries,
    destinations,
    traffic_sources,
    workspaces,
)
from trilha.deliveries.destinations import destination_of
from trilha.deliveries.jobs import Job
from trilha.links import Link
from trilha.money import from_minor


def _due(now: datetime) -> Any:
    return and_(
        deliveries.c.state == literal_column("'pending'"),
        deliveries.c.next_attempt_at <= now,
        or_(deliveries.c.lease_until.is_(None), deliveries.c.lease_until <= now),
        destinations.c.status == literal_column("'active'"),
    )


async def any_due(conn: AsyncConnection, *, now: datetime) -> bool:
    """A read that takes no write lock, so an idle worker costs SQLite nothing."""
    query = (
        select(deliveries.c.id)
        .join(destinations, destinations.c.id == deliveries.c.destination_id)
        .where(_due(now))
        .limit(1)
    )
    return (await conn.execute(query)).first() is not None


async def claim_due(
    conn: AsyncConnection, *, now: datetime, limit: int, lease: timedelta
) -> list[Job]:
    """Lease up to ``limit`` due deliveries, oldest due first, and load them."""
    due = (
        select(deliveries.c.id)
        .join(destinations, destinations.c.id == deliveries.c.destination_id)
        .where(_due(now))
        .order_by(deliveries.c.next_attempt_at)
        .limit(limit)
    )
    if conn.dialect.name == "postgresql":
        due = due.with_for_update(of=deliveries, skip_locked=True)
    lease_until = now + lease
    claimed = await conn.execute(
        update(deliveries)
        .where(deliveries.c.id.in_(due.scalar_subquery()))
        .values(lease_until=lease_until)
        .returning(deliveries.c.id)
    )
    ids = [row.id for row in claimed]
    return await load_jobs(conn, ids) if ids else []


async def load_jobs(conn: AsyncConnection, ids: Iterable[str]) -> list[Job]:
    rows = (await conn.execute(select(deliveries).where(deliveries.c.id.in_(list(ids))))).all()
    wanted = {
        "destinations": {r.destination_id for r in rows},
        "conversions": {r.conversion_id for r in rows},
    }
    found_destinations = await _by_id(conn, destinations, wanted["destinations"])
    found_conversions = {
        key: row._asdict()
        for key, row in (await _by_id(conn, conversions, wanted["conversions"])).items()
    }
    click_ids = {c["click_id"] for c in found_conversions.values() if c["click_id"]}
    found_clicks = {
        key: row._asdict() for key, row in (await _by_id(conn, clicks, click_ids)).items()
    }
    links = await _links(conn, found_clicks.values())
    jobs = []
    for row in rows:
        conversion = found_conversions[row.conversion_id]
        click = found_clicks.get(conversion["click_id"] or "")
        destination = destination_of(found_destinations[row.destination_id])
        jobs.append(
            Job(
                delivery_id=row.id,
                attempts=row.attempts,
                lease_until=row.lease_until,
                created_at=row.created_at,
                conversion_status=Status(row.conversion_status),
                destination=destination,
                conversion=conversion,
                click=click,
                link=links.get(click["id"]) if click else None,
                sent=await conn.run_sync(sent_value, conversion, destination.currency),
            )
        )
    return jobs


def sent_value(
    conn: Connection, conversion: Mapping[str, Any], currency: str | None
) -> tuple[Decimal, str] | None:
    """The conversion's value in the destination's currency: the value reports count when that
    is the workspace's currency (its rate kept), else converted at the rate of its day; None
    (send its own value and currency) when the destination wants none, or no rate is known."""
    if currency is None or currency == conversion["currency"]:
        return None
    if currency == conversion["report_currency"]:
        return from_minor(conversion["report_value_minor"], currency), currency
    converted = convert(
        conn,
        conversion["workspace_id"],
        conversion["value_minor"],
        conversion["currency"],
        currency,
        conversion["created_at"].date(),
    )
    return None if converted is None else (from_minor(converted.value_minor, currency), currency)


async def _by_id(conn: AsyncConnection, table: Table, ids: set[str]) -> dict[str, Row[Any]]:
    if not ids:
        return {}
    rows = await conn.execute(select(table).where(table.c.id.in_(sorted(ids))))
    return {row.id: row for row in rows}


async def _links(conn: AsyncConnection, found: Iterable[Mapping[str, Any]]) -> dict[str, Link]:
    """Each click's campaign, source and time zone, as the redirect's macros read them."""
    by_click = {click["id"]: click for click in found}
    if not by_click:
        return {}
    rows = await conn.execute(
        select(
            campaigns.c.id,
            campaigns.c.workspace_id,
            campaigns.c.name,
            campaigns.c.slug,
            campaigns.c.offer_url,
            workspaces.c.timezone,
        )
        .join(workspaces, workspaces.c.id == campaigns.c.workspace_id)
        .where(campaigns.c.id.in_({c["campaign_id"] for c in by_click.values()}))
    )
    found_campaigns = {row.id: row for row in rows}
    source_ids = {c["source_id"] for c in by_click.values() if c["source_id"]}
    names = {}
    if source_ids:
        sources = await conn.execute(
            select(traffic_sources.c.id, traffic_sources.c.name).where(
                traffic_sources.c.id.in_(source_ids)
            )
        )
        names = {row.id: row.name for row in sources}
    links = {}
    for click_id, click in by_click.items():
        campaign = found_campaigns.get(click["campaign_id"])
        if campaign is None:
            continue
        links[click_id] = Link(
            campaign_id=campaign.id,
            workspace_id=campaign.workspace_id,
            name=campaign.name,
            slug=campaign.slug,
            offer_url=campaign.offer_url,
            source_id=click["source_id"],
            source_name=names.get(click["source_id"] or "", ""),
            source_params=(),
            timezone=campaign.timezone,
        )
    return links
