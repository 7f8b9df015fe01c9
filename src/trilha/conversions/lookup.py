"""Reading conversions back: a filtered page, newest first, and one with its status history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Select, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import conversion_status_history, conversions
from trilha.errors import NotFound
from trilha.money import from_minor


@dataclass(frozen=True, slots=True)
class ConversionFilter:
    since: datetime | None = None
    until: datetime | None = None
    campaign_id: str | None = None
    click_id: str | None = None  # the click it is on, or the click id the platform sent
    txid: str | None = None
    status: str | None = None
    event_type: str | None = None
    merchant_id: str | None = None
    orphan: bool | None = None  # True: only orphans; False: only conversions on a click
    before_id: str | None = None  # the last id of the previous page


@dataclass(frozen=True, slots=True)
class Conversion:
    id: str
    event_type: str
    status: str
    value: Decimal
    currency: str
    txid: str | None
    click_id: str | None  # None: an orphan
    raw_click_id: str | None  # the click id the platform sent
    campaign_id: str | None
    source_id: str | None
    merchant_id: str | None
    created_at: datetime
    status_changed_at: datetime
    status_occurred_at: datetime | None  # when the platform says its status happened
    attached_at: datetime | None
    is_test: bool  # made by "send test postback": never counted
    report_value: Decimal | None  # in the workspace's currency (trilha.currencies); None: no rate
    report_currency: str | None
    rate: Decimal | None
    rate_source: str | None


@dataclass(frozen=True, slots=True)
class StatusChange:
    from_status: str | None  # None: the conversion was created
    to_status: str
    actor: str  # "postback" or "replay"
    postback_id: str | None
    created_at: datetime
    occurred_at: datetime | None  # when the platform says the event happened, if it told


async def list_conversions(
    conn: AsyncConnection, workspace_id: str, where: ConversionFilter, *, limit: int = 100
) -> list[Conversion]:
    """Newest first; page with ``before_id`` set to the last id seen."""
    query = _filtered(select(conversions).where(conversions.c.workspace_id == workspace_id), where)
    if where.before_id is not None:
        query = query.where(_older_than(workspace_id, where.before_id))
    rows = await conn.execute(
        query.order_by(conversions.c.created_at.desc(), conversions.c.id.desc()).limit(limit)
    )
    return [_conversion(row) for row in rows]


def _filtered(query: Select[Any], where: ConversionFilter) -> Select[Any]:
    c = conversions.c
    for column, value in (
        (c.campaign_id, where.campaign_id),
        (c.txid, where.txid),
        (c.status, where.status),
        (c.event_type, where.event_type),
        (c.merchant_id, where.merchant_id),
    ):
        if value is not None:
            query = query.where(column == value)
    if where.click_id is not None:
        query = query.where(or_(c.click_id == where.click_id, c.raw_click_id == where.click_id))
    if where.orphan is not None:
        query = query.where(c.click_id.is_(None) if where.orphan else c.click_id.is_not(None))
    if where.since is not None:
        query = query.where(c.created_at >= where.since)
    if where.until is not None:
        query = query.where(c.created_at < where.until)
    return query


def _older_than(workspace_id: str, before_id: str) -> Any:
    # Ids are random, so the cursor is the row's (created_at, id): an unknown id gives no rows.
    cursor = (
        select(conversions.c.created_at)
        .where(conversions.c.id == before_id, conversions.c.workspace_id == workspace_id)
        .scalar_subquery()
    )
    return or_(
        conversions.c.created_at < cursor,
        and_(conversions.c.created_at == cursor, conversions.c.id < before_id),
    )


async def get_conversion(
    conn: AsyncConnection, workspace_id: str, conversion_id: str
) -> Conversion:
    row = (
        await conn.execute(
            select(conversions).where(
                conversions.c.id == conversion_id, conversions.c.workspace_id == workspace_id
            )
        )
    ).first()
    if row is None:
        raise NotFound("conversion not found")
    return _conversion(row)


async def status_history(conn: AsyncConnection, conversion_id: str) -> list[StatusChange]:
    """Oldest first; the first entry is the conversion's creation."""
    h = conversion_status_history.c
    rows = await conn.execute(
        select(h.from_status, h.to_status, h.actor, h.postback_id, h.created_at, h.occurred_at)
        .where(h.conversion_id == conversion_id)
        .order_by(h.created_at, h.from_status.is_not(None))
    )
    return [StatusChange(*row) for row in rows]


def _conversion(row: Any) -> Conversion:
    return Conversion(
        id=row.id,
        event_type=row.event_type,
        status=row.status,
        value=from_minor(row.value_minor, row.currency),
        currency=row.currency,
        txid=row.txid,
        click_id=row.click_id,
        raw_click_id=row.raw_click_id,
        campaign_id=row.campaign_id,
        source_id=row.source_id,
        merchant_id=row.merchant_id,
        created_at=row.created_at,
        status_changed_at=row.status_changed_at,
        status_occurred_at=row.status_occurred_at,
        attached_at=row.attached_at,
        is_test=row.is_test,
        report_value=(
            None
            if row.report_currency is None
            else from_minor(row.report_value_minor, row.report_currency)
        ),
        report_currency=row.report_currency,
        rate=None if row.rate is None else Decimal(row.rate),
        rate_source=row.rate_source,
    )


async def conversions_of_clicks(
    conn: AsyncConnection, workspace_id: str, click_ids: Sequence[str]
) -> dict[str, list[Conversion]]:
    """The conversions on each of ``click_ids`` (through ix_conversions_click), oldest first."""
    if not click_ids:
        return {}
    rows = await conn.execute(
        select(conversions)
        .where(conversions.c.click_id.in_(click_ids), conversions.c.workspace_id == workspace_id)
        .order_by(conversions.c.created_at, conversions.c.id)
    )
    found: dict[str, list[Conversion]] = {}
    for row in rows:
        found.setdefault(row.click_id, []).append(_conversion(row))
    return found
