"""What a campaign cost on a day, entered or imported, and the impressions the CPM model prices.

A day's entry is for the whole campaign (``source_id`` None) or for one traffic source. An entry
with a cost replaces the model's estimate for that campaign and day (or that source's clicks on
that day): see docs/costs.md.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Insert, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.campaigns import get_campaign, get_source
from trilha.costs.models import check_cost_currency
from trilha.costs.units import parse_cost
from trilha.db.schema import campaigns, cost_days
from trilha.errors import InvalidInput, NotFound, StorageUnavailable
from trilha.money import AmountError
from trilha.workspaces import Workspace

if TYPE_CHECKING:
    from trilha.group_commit import BlockingWriter

log = logging.getLogger(__name__)

MAX_IMPRESSIONS = 10**12
MAX_LISTED_DAYS = 400
# Entries an import stores per transaction: a few milliseconds of the write lock, about what a
# batch of clicks holds it for (docs/performance.md).
IMPORT_CHUNK = 200


@dataclass(frozen=True, slots=True)
class CostEntry:
    """One day's cost (in cost units) and/or impressions, of the campaign or one source."""

    day: date
    source_id: str | None
    cost: int | None
    impressions: int | None

    def check(self) -> CostEntry:
        if self.cost is None and self.impressions is None:
            raise InvalidInput({"cost": "give a cost, impressions or both"})
        if self.impressions is not None and not 0 <= self.impressions <= MAX_IMPRESSIONS:
            raise InvalidInput({"impressions": f"must be 0 to {MAX_IMPRESSIONS}"})
        return self


def new_cost_entry(
    day: date,
    *,
    cost: str | None,
    impressions: int | None,
    source_id: str | None,
    currency: str,
) -> CostEntry:
    """An entry from what a user typed (``cost`` as ``12,50`` or ``12.50``)."""
    try:
        units = None if cost is None else parse_cost(cost, currency)
    except AmountError as error:
        raise InvalidInput({"cost": str(error)}) from None
    return CostEntry(day, source_id or None, units, impressions).check()


@dataclass(frozen=True, slots=True)
class CostDay:
    campaign_id: str
    entry: CostEntry
    currency: str
    updated_at: datetime


async def put_cost_days(
    conn: AsyncConnection,
    workspace: Workspace,
    campaign_id: str,
    entries: Sequence[CostEntry],
    *,
    currency: str,
    now: datetime,
) -> list[CostDay]:
    """Store each entry, replacing what its day (and source) held."""
    await get_campaign(conn, workspace, campaign_id)
    code = check_cost_currency(currency, workspace)
    for source_id in {e.source_id for e in entries if e.source_id is not None}:
        try:
            await get_source(conn, workspace, source_id)
        except NotFound:
            raise InvalidInput({"source_id": "no such traffic source in this workspace"}) from None
    await conn.run_sync(replace_cost_days, workspace, campaign_id, entries, code, now)
    return [CostDay(campaign_id, entry, code, now) for entry in entries]


async def import_cost_days(
    writer: BlockingWriter,
    workspace: Workspace,
    campaign_id: str,
    entries: Sequence[CostEntry],
    *,
    currency: str,
    now: datetime,
) -> list[CostDay]:
    """Store checked entries IMPORT_CHUNK at a time, each chunk a transaction of its own queued
    with the clicks' batches, so an import never holds SQLite's write lock for long. The caller
    holds no transaction.

    A chunk that fails (the database gone, the campaign deleted meanwhile) leaves the chunks
    before it stored: the error says how many lines were, and importing the file again is safe,
    as each line replaces its day.
    """
    code = check_cost_currency(currency, workspace)
    for start in range(0, len(entries), IMPORT_CHUNK):
        chunk = entries[start : start + IMPORT_CHUNK]
        began = time.monotonic()
        try:
            await writer.transaction(
                partial(
                    replace_cost_days,
                    workspace=workspace,
                    campaign_id=campaign_id,
                    entries=chunk,
                    currency=code,
                    now=now,
                )
            )
        except (SQLAlchemyError, StorageUnavailable) as error:
            log.error(
                "cost import stopped after %d of %d lines: %s",
                start,
                len(entries),
                type(error).__name__,
            )
            raise StorageUnavailable(
                f"the import stopped after {start} of {len(entries)} lines were stored; "
                "import the same file again: each line replaces its day"
            ) from None
        # As long again for the rest: a chunk's Python holds the GIL the event loop needs.
        await asyncio.sleep(time.monotonic() - began)
    return [CostDay(campaign_id, entry, code, now) for entry in entries]


def replace_cost_days(
    conn: Connection,
    workspace: Workspace,
    campaign_id: str,
    entries: Sequence[CostEntry],
    currency: str,
    now: datetime,
) -> None:
    """Store the entries of a campaign of the workspace in one statement, each replacing what
    its day (and source) held."""
    found = conn.execute(
        select(campaigns.c.id).where(
            campaigns.c.id == campaign_id, campaigns.c.workspace_id == workspace.id
        )
    ).first()
    if found is None:
        raise NotFound("campaign not found")
    rows = [
        {
            "campaign_id": campaign_id,
            "day": entry.check().day,
            "source_id": entry.source_id or "",
            "workspace_id": workspace.id,
            "currency": currency,
            "cost": entry.cost,
            "impressions": entry.impressions,
            "updated_at": now,
        }
        for entry in entries
    ]
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    statement = dialect.insert(cost_days)
    replaced: Insert = statement.on_conflict_do_update(
        index_elements=["campaign_id", "day", "source_id"],
        set_={
            name: statement.excluded[name]
            for name in ("currency", "cost", "impressions", "updated_at")
        },
    )
    conn.execute(replaced, rows)


async def delete_cost_day(
    conn: AsyncConnection,
    workspace: Workspace,
    campaign_id: str,
    day: date,
    *,
    source_id: str | None,
) -> None:
    """Forget a day's entry: the model's estimate counts for that day again."""
    await get_campaign(conn, workspace, campaign_id)
    c = cost_days.c
    deleted = await conn.execute(
        delete(cost_days).where(
            c.campaign_id == campaign_id, c.day == day, c.source_id == (source_id or "")
        )
    )
    if deleted.rowcount == 0:
        raise NotFound("no cost entered for this day")


async def list_cost_days(
    conn: AsyncConnection, workspace: Workspace, campaign_id: str, *, first: date, last: date
) -> list[CostDay]:
    """The entries from ``first`` to ``last`` (at most MAX_LISTED_DAYS days), newest first."""
    if last < first or last - first >= timedelta(days=MAX_LISTED_DAYS):
        raise InvalidInput(
            {"last": f"must be on or after first, at most {MAX_LISTED_DAYS} days on"}
        )
    await get_campaign(conn, workspace, campaign_id)
    c = cost_days.c
    rows = await conn.execute(
        select(cost_days)
        .where(c.campaign_id == campaign_id, c.day >= first, c.day <= last)
        .order_by(c.day.desc(), c.source_id)
    )
    return [
        CostDay(
            campaign_id=row.campaign_id,
            entry=CostEntry(row.day, row.source_id or None, row.cost, row.impressions),
            currency=row.currency,
            updated_at=row.updated_at,
        )
        for row in rows
    ]
