"""The hold period (seed 004): approved revenue stays "on hold" for N days after its approval,
the refund window, and only then counts as available. Set per workspace (default 0: available at
once), and per merchant where its window differs; a refund inside the window takes it back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from sqlalchemy import Connection, select

from trilha.db.schema import merchants
from trilha.errors import InvalidInput

MAX_HOLD_DAYS: Final = 365


def require_hold_days(value: object, field_name: str = "hold_days") -> int:
    """Whole days from 0 to MAX_HOLD_DAYS.

    >>> require_hold_days("30"), require_hold_days(0)
    (30, 0)
    """
    try:
        days = int(str(value).strip()) if not isinstance(value, bool) else -1
    except ValueError:
        days = -1
    if not 0 <= days <= MAX_HOLD_DAYS:
        raise InvalidInput({field_name: f"must be whole days from 0 to {MAX_HOLD_DAYS}"})
    return days


@dataclass(frozen=True, slots=True)
class Hold:
    """At one moment: sales approved after ``since`` are on hold, or after their merchant's own
    ``merchants[id]``."""

    since: datetime
    merchants: Mapping[str, datetime] = field(default_factory=dict)


def hold_at(conn: Connection, workspace_id: str, workspace_days: int, now: datetime) -> Hold:
    """The workspace's hold as of ``now``, with the merchants that set their own."""
    m = merchants.c
    query = select(m.id, m.hold_days).where(
        m.workspace_id == workspace_id, m.hold_days.is_not(None)
    )
    return Hold(
        since=now - timedelta(days=workspace_days),
        merchants={row.id: now - timedelta(days=row.hold_days) for row in conn.execute(query)},
    )
