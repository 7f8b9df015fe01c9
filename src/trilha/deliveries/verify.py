"""Checking a new or edited destination before it sends: its address must be public (unless
the install allows private ones). Then it is ``active``, or ``inactive`` with the reason."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.db.schema import destinations
from trilha.deliveries.build import Endpoints
from trilha.deliveries.destinations import destination_of
from trilha.deliveries.kinds import DestinationStatus
from trilha.deliveries.problems import ADDRESS_CHECK
from trilha.deliveries.safety import UnsafeTarget, resolve_target

BATCH = 50


async def verify_destinations(
    engine: AsyncEngine, *, endpoints: Endpoints, allow_private: bool, now: datetime
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
                endpoints.address_of(destination.kind, destination.url), allow_private=allow_private
            )
            status, reason = DestinationStatus.ACTIVE, ""
        except UnsafeTarget as exc:
            status, reason = DestinationStatus.INACTIVE, ADDRESS_CHECK.say(detail=exc)
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
