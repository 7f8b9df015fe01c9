"""Orphans: conversions whose click id was unknown when they arrived, kept with the raw id and
attached to their click when it appears (or by hand, by a user who knows where the sale came
from)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, select, update

from trilha.conversions.attribution import find_click
from trilha.conversions.status import Status
from trilha.db.schema import campaigns, clicks, conversions
from trilha.deliveries.outbox import enqueue_deliveries
from trilha.errors import InvalidInput, NotFound


def attach_orphans(conn: Connection, *, now: datetime, limit: int = 500) -> int:
    """Attach orphan conversions whose click id has since appeared; returns how many."""
    rows = (
        conn.execute(
            select(
                conversions.c.id,
                clicks.c.id.label("click"),
                clicks.c.campaign_id,
                clicks.c.source_id,
            )
            .join(clicks, clicks.c.id == conversions.c.raw_click_id)
            .join(
                campaigns,
                (campaigns.c.id == clicks.c.campaign_id)
                & (campaigns.c.workspace_id == conversions.c.workspace_id),
            )
            .where(conversions.c.click_id.is_(None))
            .limit(limit)
        )
    ).all()
    for row in rows:
        _attach(conn, row.id, row.click, row.campaign_id, row.source_id, now)
    return len(rows)


def attach_orphan(
    conn: Connection, workspace_id: str, conversion_id: str, click_id: str, *, now: datetime
) -> None:
    """Attach an orphan to a click by hand (a user who knows where the sale came from)."""
    conversion = (
        conn.execute(
            select(conversions).where(
                conversions.c.id == conversion_id, conversions.c.workspace_id == workspace_id
            )
        )
    ).first()
    if conversion is None:
        raise NotFound("conversion not found")
    if conversion.click_id is not None:
        raise InvalidInput({"conversion_id": "this conversion is already attached to a click"})
    target = find_click(conn, workspace_id, click_id)
    if target.click_id is None:
        raise InvalidInput({"click_id": "no click with this id in the workspace"})
    _attach(conn, conversion_id, target.click_id, target.campaign_id, target.source_id, now)


def _attach(
    conn: Connection,
    conversion_id: str,
    click_id: str,
    campaign_id: str | None,
    source_id: str | None,
    now: datetime,
) -> None:
    """On its click at last: the conversion is told, as it stands now, to the destinations
    that want it (an orphan was told to no one)."""
    attached = conn.execute(
        update(conversions)
        .where(conversions.c.id == conversion_id, conversions.c.click_id.is_(None))
        .values(click_id=click_id, campaign_id=campaign_id, source_id=source_id, attached_at=now)
    )
    if attached.rowcount == 1:
        row = conn.execute(select(conversions).where(conversions.c.id == conversion_id)).one()
        if not row.is_test:
            enqueue_deliveries(conn, dict(row._mapping), status=Status(row.status), now=now)
