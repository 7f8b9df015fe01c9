"""Claiming due deliveries, and loading what their requests are built from.

A claim is one conditional UPDATE that sets a lease on due, unleased deliveries of active
destinations and returns their ids: on SQLite the statement holds the write lock, on PostgreSQL
``FOR UPDATE SKIP LOCKED`` lets workers claim side by side without waiting on each other. Either
way no delivery is claimed by two workers while its lease runs.

Claims are fair: a destination has at most ``Fairness.per_destination`` deliveries in flight
(one while its last request went unanswered, and after a pause: trilha.deliveries.lifecycle),
a workspace at most
``Fairness.per_workspace``, counted across workers by their leases; and each destination's
oldest due delivery comes before any destination's second. A host that hangs holds a few slots
and then waits out its pause, never everyone's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Connection,
    Row,
    Table,
    and_,
    case,
    func,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.status import Status
from trilha.currencies import convert
from trilha.db.schema import (
    campaigns,
    click_view,
    clicks,
    conversions,
    deliveries,
    destinations,
    traffic_sources,
    workspaces,
)
from trilha.deliveries.destination import destination_of
from trilha.deliveries.jobs import Job
from trilha.links import Link
from trilha.money import from_minor


@dataclass(frozen=True, slots=True)
class Fairness:
    """How many deliveries may be in flight at once to one destination, and for one workspace."""

    per_destination: int
    per_workspace: int


def _due(now: datetime) -> Any:
    return and_(
        deliveries.c.state == literal_column("'pending'"),
        deliveries.c.next_attempt_at <= now,
        or_(deliveries.c.lease_until.is_(None), deliveries.c.lease_until <= now),
        destinations.c.status == literal_column("'active'"),
        or_(destinations.c.paused_until.is_(None), destinations.c.paused_until <= now),
    )


def _in_flight(now: datetime, by: Any) -> Any:
    """Leased deliveries per ``by`` (destination or workspace), whichever worker holds them."""
    return (
        select(by.label("key"), func.count().label("n"))
        .where(
            deliveries.c.state == literal_column("'pending'"),
            deliveries.c.lease_until > now,
        )
        .group_by(by)
        .subquery()
    )


def _fair_ids(now: datetime, limit: int, fairness: Fairness) -> Any:
    """The ids to claim: due ones each destination and workspace has room for, the oldest of
    every destination first."""
    by_destination = _in_flight(now, deliveries.c.destination_id)
    by_workspace = _in_flight(now, deliveries.c.workspace_id)
    room = case(
        # A request went unanswered: one at a time until an answer comes (and after a pause).
        (destinations.c.unanswered > 0, 1),
        else_=fairness.per_destination,
    ) - func.coalesce(by_destination.c.n, 0)
    ranked = (
        select(
            deliveries.c.id,
            deliveries.c.workspace_id,
            deliveries.c.next_attempt_at,
            func.row_number()
            .over(
                partition_by=deliveries.c.destination_id,
                order_by=(deliveries.c.next_attempt_at, deliveries.c.id),
            )
            .label("turn"),
            room.label("room"),
        )
        .join(destinations, destinations.c.id == deliveries.c.destination_id)
        .outerjoin(by_destination, by_destination.c.key == deliveries.c.destination_id)
        .where(_due(now))
        .subquery("ranked")
    )
    fitting = (
        select(
            ranked.c.id,
            ranked.c.workspace_id,
            ranked.c.turn,
            ranked.c.next_attempt_at,
            func.row_number()
            .over(
                partition_by=ranked.c.workspace_id,
                order_by=(ranked.c.turn, ranked.c.next_attempt_at, ranked.c.id),
            )
            .label("workspace_turn"),
        )
        .where(ranked.c.turn <= ranked.c.room)
        .subquery("fitting")
    )
    return (
        select(fitting.c.id)
        .outerjoin(by_workspace, by_workspace.c.key == fitting.c.workspace_id)
        .where(
            fitting.c.workspace_turn <= fairness.per_workspace - func.coalesce(by_workspace.c.n, 0)
        )
        .order_by(fitting.c.turn, fitting.c.next_attempt_at, fitting.c.id)
        .limit(limit)
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
    conn: AsyncConnection, *, now: datetime, limit: int, lease: timedelta, fairness: Fairness
) -> list[Job]:
    """Lease up to ``limit`` due deliveries, fairly (see the module), and load them."""
    chosen = _fair_ids(now, limit, fairness).scalar_subquery()
    if conn.dialect.name == "postgresql":  # lock what is chosen, skipping another worker's
        chosen = (
            select(deliveries.c.id)
            .where(
                deliveries.c.id.in_(chosen),
                deliveries.c.state == literal_column("'pending'"),
                or_(deliveries.c.lease_until.is_(None), deliveries.c.lease_until <= now),
            )
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
    lease_until = now + lease
    claimed = await conn.execute(
        update(deliveries)
        .where(deliveries.c.id.in_(chosen))
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
    found_clicks = await _clicks(conn, click_ids)
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


async def _clicks(conn: AsyncConnection, ids: set[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    rows = await conn.execute(click_view.where(clicks.c.id.in_(sorted(ids))))
    return {row.id: row._asdict() for row in rows}


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
