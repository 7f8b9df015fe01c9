"""Checking a new or edited destination before it sends: its address must be public (unless
the install allows private ones). Then it is ``active``, or ``inactive`` with the reason."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.db.schema import destinations
from trilha.deliveries.destinations import Destination, destination_of
from trilha.deliveries.kinds import DestinationStatus, Kind
from trilha.deliveries.safety import UnsafeTarget, resolve_target

BATCH = 50


def address_of(destination: Destination, *, meta_graph_url: str) -> str:
    """The URL whose host a destination calls (a template's host holds no macro)."""
    return meta_graph_url if destination.kind is Kind.META_CAPI else destination.url


async def verify_destinations(
    engine: AsyncEngine, *, meta_graph_url: str, allow_private: bool, now: datetime
) -> int:
    """Check the destinations waiting to be verified; how many were.

    DNS is asked outside any transaction; a destination edited meanwhile stays ``verifying``
    for the next round."""
    async with engine.connect() as conn:
        rows = (
            await conn.execute(
                select(destinations)
                .where(destinations.c.status == DestinationStatus.VERIFYING)
                .limit(BATCH)
            )
        ).all()
    for row in rows:
        destination = destination_of(row)
        try:
            await resolve_target(
                address_of(destination, meta_graph_url=meta_graph_url), allow_private=allow_private
            )
            status, reason = DestinationStatus.ACTIVE, ""
        except UnsafeTarget as exc:
            status, reason = DestinationStatus.INACTIVE, f"address check failed: {exc}"
        async with engine.begin() as conn:
            await conn.execute(
                update(destinations)
                .where(
                    destinations.c.id == destination.id,
                    destinations.c.status == DestinationStatus.VERIFYING,
                    destinations.c.updated_at == destination.updated_at,
                )
                .values(status=status, status_reason=reason, updated_at=now)
            )
    return len(rows)
