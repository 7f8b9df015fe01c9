"""Reconciliation's SQL: the conversions and postback log entries a file's sales are compared
with, a merchant's remembered columns, and the reconciliations kept."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, and_, delete, insert, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.outcome import Outcome
from trilha.db.schema import (
    conversions,
    merchants,
    postback_log,
    reconciliation_columns,
    reconciliations,
)
from trilha.errors import NotFound
from trilha.ids import new_id
from trilha.money import from_minor
from trilha.reconciliation.compare import Cause, Evidence, Line, Recorded, Verdict, Window
from trilha.reconciliation.layouts import Columns, Layout

CHUNK = 500  # ids per IN list
# What a transaction id looks like inside a raw request: HP123, 1a2b-3c, KIW_9.8 ...
_WORDS = re.compile(r"[\w.\-]+")
# Postbacks may arrive before a sale's recorded time (clock skew) or long after (a retry).
EVIDENCE_MARGIN = timedelta(days=3)
# Invalid postbacks whose transaction id was never read are searched by their raw text; at most
# this many of the window's, newest first.
MAX_UNREAD_ENTRIES = 5000


@dataclass(frozen=True, slots=True)
class StoredColumns:
    layout: Layout
    columns: Columns


@dataclass(frozen=True, slots=True)
class Reconciliation:
    id: str
    merchant_id: str | None
    filename: str
    created_at: datetime
    window_start: datetime | None
    window_end: datetime | None
    counts: dict[str, int]
    bad_rows: list[dict[str, Any]]  # {"row": 7, "reason": "..."}
    lines: list[Line]


def merchant_preset(conn: Connection, workspace_id: str, merchant_id: str) -> str:
    """The merchant's postback preset; NotFound when it is not the workspace's."""
    preset = conn.execute(
        select(merchants.c.preset).where(
            merchants.c.id == merchant_id, merchants.c.workspace_id == workspace_id
        )
    ).scalar_one_or_none()
    if preset is None:
        raise NotFound("merchant not found")
    return str(preset)


def stored_columns(conn: Connection, merchant_id: str) -> StoredColumns | None:
    row = conn.execute(
        select(reconciliation_columns.c.layout, reconciliation_columns.c.columns).where(
            reconciliation_columns.c.merchant_id == merchant_id
        )
    ).first()
    if row is None:
        return None
    return StoredColumns(Layout(row.layout), Columns.of(row.columns))


def remember_columns(
    conn: Connection,
    workspace_id: str,
    merchant_id: str,
    chosen: StoredColumns,
    *,
    now: datetime,
) -> None:
    conn.execute(
        delete(reconciliation_columns).where(reconciliation_columns.c.merchant_id == merchant_id)
    )
    conn.execute(
        insert(reconciliation_columns).values(
            merchant_id=merchant_id,
            workspace_id=workspace_id,
            layout=chosen.layout.value,
            columns=chosen.columns.as_dict(),
            updated_at=now,
        )
    )


def _chunks(values: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


def recorded_conversions(
    conn: Connection,
    workspace_id: str,
    merchant_id: str,
    txids: Sequence[str],
    window: Window | None,
) -> list[Recorded]:
    """The conversions with the file's transaction ids, through the UNIQUE dedupe key (which is
    ``tx:<txid>`` under the txid dedupe modes), and the merchant's recorded within the file's
    days, through the index by time. Test conversions are left out."""
    c = conversions.c
    found: dict[str, Any] = {}
    for chunk in _chunks(txids):
        keys = [f"tx:{txid}" for txid in chunk]
        query = select(conversions).where(
            c.workspace_id == workspace_id, c.dedupe_key.in_(keys), c.is_test.is_(False)
        )
        found.update((row.id, row) for row in conn.execute(query))
    if window is not None:
        query = select(conversions).where(
            c.workspace_id == workspace_id,
            c.created_at >= window.start,
            c.created_at < window.end,
            c.merchant_id == merchant_id,
            c.txid.is_not(None),
            c.is_test.is_(False),  # a "send test postback" is no sale to reconcile
        )
        found.update((row.id, row) for row in conn.execute(query))
    return [_recorded(row) for row in found.values()]


def _recorded(row: Any) -> Recorded:
    return Recorded(
        id=row.id,
        txid=row.txid,
        status=row.status,
        value=from_minor(row.value_minor, row.currency),
        currency=row.currency,
        created_at=row.created_at,
        is_orphan=row.click_id is None,
        merchant_id=row.merchant_id,
    )


def postback_evidence(
    conn: Connection, workspace_id: str, txids: Sequence[str], window: Window
) -> dict[str, Evidence]:
    """For each transaction id, the latest postback log entry about it: one that read it, else
    an invalid or ignored one whose raw request holds it (the mapping missed the field)."""
    log = postback_log.c
    start, end = window.start - EVIDENCE_MARGIN, window.end + EVIDENCE_MARGIN
    in_window = and_(
        log.workspace_id == workspace_id, log.received_at >= start, log.received_at < end
    )
    found: dict[str, Evidence] = {}
    for chunk in _chunks(txids):
        query = (
            select(log.id, log.txid, log.outcome, log.reason, log.received_at)
            .where(in_window, log.txid.in_(chunk))
            .order_by(log.received_at)
        )
        for row in conn.execute(query):
            found[row.txid] = Evidence(row.id, row.outcome, row.reason, row.received_at)
    unread = [txid for txid in txids if txid not in found]
    if unread:
        found.update(_unread_evidence(conn, in_window, unread))
    return found


def _unread_evidence(conn: Connection, in_window: Any, txids: Sequence[str]) -> dict[str, Evidence]:
    log = postback_log.c
    query = (
        select(log.id, log.outcome, log.reason, log.received_at, log.query, log.body)
        .where(
            in_window,
            log.txid.is_(None),
            log.outcome.in_([Outcome.INVALID.value, Outcome.IGNORED.value]),
        )
        .order_by(log.received_at.desc())
        .limit(MAX_UNREAD_ENTRIES)
    )
    wanted = set(txids)
    found: dict[str, Evidence] = {}
    # Newest first, so the first entry naming a transaction id is its latest: one pass over the
    # entries' words, whatever the number of ids.
    for row in conn.execute(query):
        for word in _WORDS.findall(f"{row.query} {row.body}"):
            if word in wanted and word not in found:
                found[word] = Evidence(row.id, row.outcome, row.reason, row.received_at)
    return found


def save_reconciliation(
    conn: Connection,
    workspace_id: str,
    merchant_id: str,
    *,
    filename: str,
    window: Window | None,
    counts: dict[str, int],
    bad_rows: list[dict[str, Any]],
    lines: Sequence[Line],
    now: datetime,
) -> str:
    reconciliation_id = new_id()
    conn.execute(
        insert(reconciliations).values(
            id=reconciliation_id,
            workspace_id=workspace_id,
            merchant_id=merchant_id,
            filename=filename[:200],
            created_at=now,
            window_start=window.start if window else None,
            window_end=window.end if window else None,
            counts=counts,
            bad_rows=bad_rows,
            lines=[line_json(line) for line in lines],
        )
    )
    return reconciliation_id


def line_json(line: Line) -> dict[str, Any]:
    """A line as stored: amounts as exact strings, times in ISO 8601."""
    stored: dict[str, Any] = {}
    for name, value in asdict(line).items():
        if isinstance(value, Decimal):
            value = str(value)
        elif isinstance(value, datetime):
            value = value.isoformat()
        stored[name] = value
    return stored


_DECIMALS = frozenset({"platform_value", "trilha_value"})
_TIMES = frozenset({"sold_at", "recorded_at"})


def line_of(stored: dict[str, Any]) -> Line:
    values: dict[str, Any] = {f.name: stored.get(f.name) for f in fields(Line)}
    for name in _DECIMALS:
        if values[name] is not None:
            values[name] = Decimal(values[name])
    for name in _TIMES:
        if values[name] is not None:
            values[name] = datetime.fromisoformat(values[name])
    values["verdict"] = Verdict(values["verdict"])
    values["cause"] = Cause(values["cause"]) if values["cause"] else None
    values["reason"] = values["reason"] or ""
    values["is_orphan"] = bool(values["is_orphan"])
    return Line(**values)


async def get_reconciliation(
    conn: AsyncConnection, workspace_id: str, reconciliation_id: str
) -> Reconciliation:
    r = reconciliations.c
    row = (
        await conn.execute(
            select(reconciliations).where(r.id == reconciliation_id, r.workspace_id == workspace_id)
        )
    ).first()
    if row is None:
        raise NotFound("reconciliation not found")
    return _reconciliation(row, with_lines=True)


async def list_reconciliations(
    conn: AsyncConnection, workspace_id: str, *, limit: int = 50
) -> list[Reconciliation]:
    """The newest first, without their lines."""
    r = reconciliations.c
    query = (
        select(
            r.id,
            r.merchant_id,
            r.filename,
            r.created_at,
            r.window_start,
            r.window_end,
            r.counts,
            r.bad_rows,
        )
        .where(r.workspace_id == workspace_id)
        .order_by(r.created_at.desc(), r.id.desc())
        .limit(limit)
    )
    return [_reconciliation(row, with_lines=False) for row in await conn.execute(query)]


def _reconciliation(row: Any, *, with_lines: bool) -> Reconciliation:
    return Reconciliation(
        id=row.id,
        merchant_id=row.merchant_id,
        filename=row.filename,
        created_at=row.created_at,
        window_start=row.window_start,
        window_end=row.window_end,
        counts=dict(row.counts),
        bad_rows=list(row.bad_rows),
        lines=[line_of(line) for line in row.lines] if with_lines else [],
    )


async def remembered_columns(conn: AsyncConnection, workspace_id: str) -> dict[str, Columns]:
    """The columns remembered for each merchant of the workspace that has some."""
    r = reconciliation_columns.c
    rows = await conn.execute(
        select(r.merchant_id, r.columns).where(r.workspace_id == workspace_id)
    )
    return {row.merchant_id: Columns.of(row.columns) for row in rows}
