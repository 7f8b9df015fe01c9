"""Checking a new or edited destination before it sends: its address must be public (unless
the install allows private ones). Then it is ``active``, or ``inactive`` with the reason.

A URL the user typed is also checked as it is saved, so a private address is refused with the
setting that allows it named, rather than found by the worker a moment later."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.db.schema import destinations
from trilha.deliveries.build import Endpoints
from trilha.deliveries.destination import destination_of
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import DestinationStatus, Kind
from trilha.deliveries.problems import ADDRESS_CHECK
from trilha.deliveries.safety import NotPublic, UnsafeTarget, resolve_target
from trilha.errors import InvalidInput

BATCH = 50
PRIVATE_REFUSED = (
    "'{host}' resolves to '{address}', which is not a public address: trilha sends to "
    "private addresses only when the server runs with TRILHA_DELIVERY_ALLOW_PRIVATE=true"
)


async def refuse_private_address(spec: Spec, *, allow_private: bool) -> None:
    """InvalidInput on ``url`` when a URL the user typed (a postback's or a webhook's) calls an
    address that is not public and the install does not allow such addresses.

    Anything else wrong with the address (a host that does not resolve yet, a malformed URL)
    is left to the form's own checks and to the check after saving."""
    if allow_private or spec.kind not in (Kind.POSTBACK, Kind.WEBHOOK):
        return
    try:
        await resolve_target(spec.url.strip(), allow_private=False)
    except NotPublic as exc:
        raise InvalidInput(
            {"url": PRIVATE_REFUSED.format(host=exc.host, address=exc.address)}
        ) from None
    except UnsafeTarget:
        return


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
