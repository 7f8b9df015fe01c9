"""Event types of a workspace: which count as conversions and which as revenue."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Connection, bindparam, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import event_types
from trilha.errors import Conflict, InvalidInput, NotFound
from trilha.ids import new_id

NAME = re.compile(r"[A-Z][A-Z0-9_]{0,39}")


class BuiltinEvent(StrEnum):
    """The event types every workspace starts with; users add their own beside them."""

    LEAD = "LEAD"
    SALE = "SALE"
    UPSELL = "UPSELL"
    REBILL = "REBILL"
    REGISTRATION = "REGISTRATION"
    FTD = "FTD"  # a first deposit: counted once per click, whatever the dedupe mode
    DEPOSIT = "DEPOSIT"


# event type: (counts as a conversion, counts as revenue)
BUILTIN: dict[BuiltinEvent, tuple[bool, bool]] = {
    BuiltinEvent.LEAD: (True, False),
    BuiltinEvent.SALE: (True, True),
    BuiltinEvent.UPSELL: (True, True),
    BuiltinEvent.REBILL: (True, True),
    BuiltinEvent.REGISTRATION: (True, False),
    BuiltinEvent.FTD: (True, True),
    BuiltinEvent.DEPOSIT: (True, True),
}


@dataclass(frozen=True, slots=True)
class EventType:
    id: str
    name: str
    counts_as_conversion: bool
    counts_as_revenue: bool
    is_builtin: bool


async def add_builtin_event_types(
    conn: AsyncConnection, workspace_id: str, *, now: datetime
) -> None:
    await conn.execute(
        event_types.insert(),
        [
            {
                "id": new_id(),
                "workspace_id": workspace_id,
                "name": name,
                "counts_as_conversion": c,
                "counts_as_revenue": r,
                "is_builtin": True,
                "created_at": now,
            }
            for name, (c, r) in BUILTIN.items()
        ],
    )


async def list_event_types(conn: AsyncConnection, workspace_id: str) -> list[EventType]:
    rows = await conn.execute(
        select(event_types)
        .where(event_types.c.workspace_id == workspace_id)
        .order_by(event_types.c.is_builtin.desc(), event_types.c.name)
    )
    return [
        EventType(r.id, r.name, r.counts_as_conversion, r.counts_as_revenue, r.is_builtin)
        for r in rows
    ]


_NAMES = select(event_types.c.name).where(event_types.c.workspace_id == bindparam("workspace_id"))


def event_type_names(conn: Connection, workspace_id: str) -> frozenset[str]:
    rows = conn.execute(_NAMES, {"workspace_id": workspace_id})
    return frozenset(rows.scalars())


async def create_event_type(
    conn: AsyncConnection,
    workspace_id: str,
    *,
    name: str,
    counts_as_conversion: bool,
    counts_as_revenue: bool,
    now: datetime,
) -> EventType:
    name = name.strip().upper()
    if not NAME.fullmatch(name):
        raise InvalidInput({"name": "use 1 to 40 letters, digits or '_', starting with a letter"})
    item = EventType(new_id(), name, counts_as_conversion, counts_as_revenue, False)
    try:
        async with conn.begin_nested():
            await conn.execute(
                event_types.insert().values(
                    id=item.id,
                    workspace_id=workspace_id,
                    name=name,
                    is_builtin=False,
                    created_at=now,
                    counts_as_conversion=counts_as_conversion,
                    counts_as_revenue=counts_as_revenue,
                )
            )
    except IntegrityError:
        raise Conflict("an event type with this name exists", field="name") from None
    return item


async def update_event_type(
    conn: AsyncConnection,
    workspace_id: str,
    event_type_id: str,
    *,
    counts_as_conversion: bool | None = None,
    counts_as_revenue: bool | None = None,
) -> EventType:
    values = {
        k: v
        for k, v in (
            ("counts_as_conversion", counts_as_conversion),
            ("counts_as_revenue", counts_as_revenue),
        )
        if v is not None
    }
    if values:
        await conn.execute(
            update(event_types)
            .where(event_types.c.id == event_type_id, event_types.c.workspace_id == workspace_id)
            .values(**values)
        )
    return await get_event_type(conn, workspace_id, event_type_id)


async def get_event_type(conn: AsyncConnection, workspace_id: str, event_type_id: str) -> EventType:
    row = (
        await conn.execute(
            select(event_types).where(
                event_types.c.id == event_type_id, event_types.c.workspace_id == workspace_id
            )
        )
    ).first()
    if row is None:
        raise NotFound("event type not found")
    return EventType(
        row.id, row.name, row.counts_as_conversion, row.counts_as_revenue, row.is_builtin
    )


async def delete_event_type(conn: AsyncConnection, workspace_id: str, event_type_id: str) -> None:
    """Custom types only; conversions already recorded keep their type's name."""
    item = await get_event_type(conn, workspace_id, event_type_id)
    if item.is_builtin:
        raise InvalidInput({"name": "built-in event types cannot be deleted"})
    await conn.execute(delete(event_types).where(event_types.c.id == event_type_id))
