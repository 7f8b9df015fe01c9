"""The outbox: the deliveries a conversion's change calls for, written in the transaction that
records the change, so that neither exists without the other. Sending is the worker's job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, func, literal_column, select

from trilha.db.driver import insert_row
from trilha.db.schema import clicks, deliveries, destinations
from trilha.deliveries.kinds import DeliveryState
from trilha.ids import new_id

# Built once; the literal status lets the database use the workspace index alone.
_ACTIVE = select(
    destinations.c.id,
    destinations.c.event_types,
    destinations.c.statuses,
    destinations.c.campaign_id,
    destinations.c.source_id,
    destinations.c.sub_id,
).where(
    destinations.c.workspace_id == bindparam("workspace_id"),
    destinations.c.status == literal_column("'active'"),
)
_SUB1 = select(clicks.c.sub1).where(clicks.c.id == bindparam("click_id"))
_MEMO = "trilha.active_destinations"
_IF_NEW = "ON CONFLICT (destination_id, conversion_id, conversion_status) DO NOTHING RETURNING id"


def enqueue_change(
    conn: Connection, conversion: dict[str, Any], *, status: str, now: datetime
) -> int:
    """The deliveries ``conversion``'s new ``status`` calls for. Test conversions and orphans
    (no click to name to a tracker or an ad network) are told to no one."""
    if not conversion["click_id"] or conversion["is_test"]:
        return 0
    return enqueue_deliveries(conn, conversion, status=status, now=now)


def enqueue_deliveries(
    conn: Connection, conversion: dict[str, Any], *, status: str, now: datetime
) -> int:
    """One pending delivery per active destination that wants this change of ``conversion``
    (a conversions row's columns); how many were queued."""
    rows = _active(conn, conversion["workspace_id"])
    return sum(
        enqueue_for(conn, row.id, conversion, status, now)
        for row in rows
        if wanted_by(conn, row, conversion, status)
    )


def _active(conn: Connection, workspace_id: str) -> list[Any]:
    """The workspace's active destinations, read once per transaction: a group-commit batch
    holds many postbacks, often of one workspace, and none of them changes its destinations
    (the read cost about a fifth of a postback's CPU)."""
    transaction = conn.get_transaction()
    memo = conn.info.get(_MEMO)
    if memo is None or memo[0] is not transaction:
        memo = conn.info[_MEMO] = (transaction, {})
    found: dict[str, list[Any]] = memo[1]
    if workspace_id not in found:
        found[workspace_id] = list(conn.execute(_ACTIVE, {"workspace_id": workspace_id}))
    return found[workspace_id]


def enqueue_for(
    conn: Connection, destination_id: str, conversion: dict[str, Any], status: str, now: datetime
) -> int:
    """Queue one delivery; 0 when the destination already has this change."""
    row = {
        "id": new_id(),
        "workspace_id": conversion["workspace_id"],
        "destination_id": destination_id,
        "conversion_id": conversion["id"],
        "conversion_status": status,
        "state": DeliveryState.PENDING,
        "attempts": 0,
        "next_attempt_at": now,
        "last_error": "",
        "created_at": now,
    }
    return int(insert_row(conn, deliveries, row, returning=_IF_NEW) is not None)


def wanted_by(conn: Connection, destination: Any, conversion: dict[str, Any], status: str) -> bool:
    """Whether this change of ``conversion`` passes the destination's filters (a destinations
    row); none set lets everything through, each one set must match."""
    if not (
        _passes(destination.event_types, conversion["event_type"])
        and _passes(destination.statuses, status)
        and destination.campaign_id in (None, conversion.get("campaign_id"))
        and destination.source_id in (None, conversion.get("source_id"))
    ):
        return False
    if destination.sub_id is None:
        return True
    if "sub1" not in conversion:  # looked up once per conversion, only when a filter asks
        conversion["sub1"] = conn.execute(_SUB1, {"click_id": conversion.get("click_id")}).scalar()
    return bool(destination.sub_id == conversion["sub1"])


def _passes(allowed: Sequence[str], value: str) -> bool:
    """An empty filter lets everything through.

    >>> _passes([], "SALE"), _passes(["LEAD"], "SALE")
    (True, False)
    """
    return not allowed or value in allowed


@dataclass(frozen=True, slots=True)
class Backlog:
    """The deliveries still to send (due or waiting for a retry), and the oldest one's age."""

    depth: int
    oldest_age: float  # seconds; 0 when there is none


def backlog(conn: Connection, *, now: datetime) -> Backlog:
    """Read at each /metrics scrape: the due index finds the pending rows, few when deliveries
    flow; a large backlog costs a longer scan, which is what the gauge is there to show."""
    depth, oldest = conn.execute(
        select(func.count(), func.min(deliveries.c.created_at)).where(
            deliveries.c.state == literal_column("'pending'")
        )
    ).one()
    age = (now - oldest).total_seconds() if oldest is not None else 0.0
    return Backlog(depth=int(depth), oldest_age=max(0.0, age))
