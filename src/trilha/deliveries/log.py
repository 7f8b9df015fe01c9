"""The delivery log: deliveries with their attempts, newest first; retrying one by hand, and
sending again every conversion of a time range (a destination added late)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, RowMapping, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import campaigns, conversions, deliveries, delivery_attempts, destinations
from trilha.deliveries.kinds import DeliveryState
from trilha.deliveries.outbox import enqueue_for, wanted_by
from trilha.errors import InvalidInput, NotFound
from trilha.money import from_minor
from trilha.workspaces import Workspace

RESEND_MAX = 10_000  # conversions one re-send may queue


@dataclass(frozen=True, slots=True)
class DeliveryFilter:
    destination_id: str | None = None
    conversion_id: str | None = None
    txid: str | None = None  # the sale's transaction id at its platform
    state: DeliveryState | None = None
    since: datetime | None = None
    until: datetime | None = None
    before_id: str | None = None


# Each delivery with what a reader needs to tell which sale it was for.
_COLUMNS = (
    *deliveries.c,
    destinations.c.name.label("destination_name"),
    conversions.c.txid,
    conversions.c.value_minor,
    conversions.c.currency,
    conversions.c.campaign_id,
    campaigns.c.name.label("campaign_name"),
)
_JOINED = (
    deliveries.join(destinations, destinations.c.id == deliveries.c.destination_id)
    .join(conversions, conversions.c.id == deliveries.c.conversion_id)
    .outerjoin(campaigns, campaigns.c.id == conversions.c.campaign_id)
)


async def list_deliveries(
    conn: AsyncConnection, workspace: Workspace, where: DeliveryFilter, *, limit: int = 100
) -> list[dict[str, Any]]:
    """Newest first; page with ``before_id`` set to the last id seen."""
    d = deliveries.c
    query = select(*_COLUMNS).select_from(_JOINED).where(d.workspace_id == workspace.id)
    for column, value in (
        (d.destination_id, where.destination_id),
        (d.conversion_id, where.conversion_id),
        (conversions.c.txid, where.txid),
        (d.state, where.state),
    ):
        if value is not None:
            query = query.where(column == value)
    if where.since is not None:
        query = query.where(d.created_at >= where.since)
    if where.until is not None:
        query = query.where(d.created_at < where.until)
    if where.before_id is not None:
        cursor = (
            select(d.created_at)
            .where(d.id == where.before_id, d.workspace_id == workspace.id)
            .scalar_subquery()
        )
        query = query.where(
            or_(d.created_at < cursor, and_(d.created_at == cursor, d.id < where.before_id))
        )
    rows = await conn.execute(query.order_by(d.created_at.desc(), d.id.desc()).limit(limit))
    return [_with_value(row) for row in rows.mappings()]


def _with_value(row: RowMapping) -> dict[str, Any]:
    """The row, with its sale's value as an amount of its currency."""
    return dict(row) | {"value": from_minor(row["value_minor"], row["currency"])}


async def get_delivery(
    conn: AsyncConnection, workspace: Workspace, delivery_id: str
) -> dict[str, Any]:
    """A delivery with its attempts (``attempts_log``), oldest first."""
    row = (
        await conn.execute(
            select(*_COLUMNS)
            .select_from(_JOINED)
            .where(deliveries.c.id == delivery_id, deliveries.c.workspace_id == workspace.id)
        )
    ).first()
    if row is None:
        raise NotFound("no such delivery")
    attempts = await conn.execute(
        select(delivery_attempts)
        .where(delivery_attempts.c.delivery_id == delivery_id)
        .order_by(delivery_attempts.c.started_at)
    )
    return _with_value(row._mapping) | {"attempts_log": [dict(a) for a in attempts.mappings()]}


async def retry_delivery(
    conn: AsyncConnection, workspace: Workspace, delivery_id: str, *, now: datetime
) -> dict[str, Any]:
    """Send a finished delivery again now, with a fresh retry schedule."""
    await get_delivery(conn, workspace, delivery_id)
    await conn.execute(
        update(deliveries)
        .where(deliveries.c.id == delivery_id, deliveries.c.state != DeliveryState.PENDING)
        .values(**_again(now))
    )
    return await get_delivery(conn, workspace, delivery_id)


def _again(now: datetime) -> dict[str, Any]:
    return {
        "state": DeliveryState.PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "lease_until": None,
        "finished_at": None,
    }


@dataclass(frozen=True, slots=True)
class EarlierSales:
    """The sales a destination could be sent with a re-send: recorded before it was made."""

    count: int
    first: datetime
    last: datetime


async def earlier_sales(
    conn: AsyncConnection, workspace: Workspace, before: datetime
) -> EarlierSales | None:
    """The workspace's sales on a click (those a re-send sends) recorded before ``before``;
    None when there are none."""
    count, first, last = (
        await conn.execute(
            select(
                func.count(), func.min(conversions.c.created_at), func.max(conversions.c.created_at)
            ).where(
                conversions.c.workspace_id == workspace.id,
                conversions.c.created_at < before,
                conversions.c.click_id.is_not(None),
                conversions.c.is_test.is_(False),
            )
        )
    ).one()
    return EarlierSales(count, first, last) if count else None


def resend_range(
    conn: Connection,
    workspace_id: str,
    destination_id: str,
    *,
    since: datetime,
    until: datetime,
    now: datetime,
) -> int:
    """Queue the destination's delivery of each conversion recorded in [since, until) that its
    filters let through (with the conversion's current status), or send an existing one again;
    how many were queued."""
    if until <= since:
        raise InvalidInput({"until": "must be after since"})
    destination = conn.execute(
        select(destinations).where(
            destinations.c.id == destination_id, destinations.c.workspace_id == workspace_id
        )
    ).first()
    if destination is None:
        raise NotFound("no such destination")
    rows = conn.execute(
        select(conversions)
        .where(
            conversions.c.workspace_id == workspace_id,
            conversions.c.created_at >= since,
            conversions.c.created_at < until,
            conversions.c.click_id.is_not(None),
            conversions.c.is_test.is_(False),
        )
        .order_by(conversions.c.created_at)
        .limit(RESEND_MAX + 1)
    ).all()
    if len(rows) > RESEND_MAX:
        raise InvalidInput({"since": f"at most {RESEND_MAX} conversions at a time: narrow it"})
    queued = 0
    for row in rows:
        conversion = dict(row._mapping)
        if not wanted_by(conn, destination, conversion, conversion["status"]):
            continue
        queued += enqueue_for(conn, destination_id, conversion, conversion["status"], now) or (
            conn.execute(
                update(deliveries)
                .where(
                    deliveries.c.destination_id == destination_id,
                    deliveries.c.conversion_id == conversion["id"],
                    deliveries.c.conversion_status == conversion["status"],
                    deliveries.c.state != DeliveryState.PENDING,
                )
                .values(**_again(now))
            ).rowcount
        )
    return queued
