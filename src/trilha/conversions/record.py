"""Recording a reported sale: once per dedupe key, status changes only along legal paths, each
change kept in the status history.

The first value recorded is never overwritten. A repeated report is `duplicate`; a legal status
change (pending → approved, approved → refunded, ...) updates the current status and appends a
history row; anything else is `ignored` and logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Connection, select, text, update

from trilha.conversions.attribution import Attribution
from trilha.conversions.dedupe import DedupeMode, dedupe_key
from trilha.conversions.outcome import Outcome
from trilha.conversions.status import LEGAL_CHANGES, Status
from trilha.currencies import convert, converted_columns
from trilha.db.driver import insert_row
from trilha.db.schema import conversion_status_history, conversions
from trilha.ids import new_id
from trilha.money import from_minor, rounded, to_minor
from trilha.privacy.hashes import NO_BUYER, BuyerHashes


@dataclass(frozen=True, slots=True)
class Reported:
    """A sale as its platform reports it, in trilha's words."""

    event_type: str
    status: Status
    value: Decimal
    currency: str
    txid: str | None
    buyer: BuyerHashes = NO_BUYER  # kept on a new conversion, never its data in clear
    is_test: bool = False  # made by "send test postback": shown as a test, never counted
    occurred_at: datetime | None = None  # the platform's own time of the event, if it tells


@dataclass(frozen=True, slots=True)
class Dedupe:
    """The merchant's dedupe mode, and its window (used by DedupeMode.WINDOW)."""

    mode: DedupeMode
    window: timedelta


@dataclass(frozen=True, slots=True)
class Change:
    """A conversion (a conversions row's columns) that took a new status, for the outbox."""

    conversion: dict[str, Any]
    status: Status


@dataclass(frozen=True, slots=True)
class Recorded:
    outcome: Outcome
    reason: str
    conversion_id: str
    status: Status  # the conversion's, once recorded: an ignored change leaves it as it was
    details: dict[str, Any]
    change: Change | None = None  # a new conversion or status, which destinations may want


def record_conversion(
    conn: Connection,
    *,
    workspace_id: str,
    merchant_id: str | None,
    reported: Reported,
    attribution: Attribution,
    dedupe: Dedupe,
    postback_id: str,
    actor: str,
    now: datetime,
    workspace_currency: str,
) -> Recorded:
    """Insert the conversion, or find the one it repeats and apply a status change.

    ``actor``: who reported it, kept in the status history ("postback", "replay"). A new
    conversion also keeps its value in ``workspace_currency`` at the rate of its day.
    """
    value_minor = to_minor(reported.value, reported.currency)
    if dedupe.mode is DedupeMode.WINDOW:
        since = now - dedupe.window
        existing = _within_window(conn, workspace_id, reported, attribution, since)
        if existing is not None:
            return _repeat(conn, existing, reported, value_minor, postback_id, actor, now)
    key = dedupe_key(
        dedupe.mode, reported.event_type, reported.txid, attribution.raw_click_id, postback_id
    )
    conversion_id = new_id()
    row = {
        "id": conversion_id,
        "workspace_id": workspace_id,
        "click_id": attribution.click_id,
        "raw_click_id": attribution.raw_click_id,
        "campaign_id": attribution.campaign_id,
        "source_id": attribution.source_id,
        "merchant_id": merchant_id,
        "event_type": reported.event_type,
        "status": reported.status,
        "value_minor": value_minor,
        "currency": reported.currency,
        "txid": reported.txid,
        "buyer_email_sha256": reported.buyer.email_sha256,
        "buyer_phone_sha256": reported.buyer.phone_sha256,
        "is_test": reported.is_test,
        "dedupe_key": key,
        "created_at": now,
        "status_changed_at": now,
        "status_occurred_at": reported.occurred_at,
        **converted_columns(
            convert(
                conn, workspace_id, value_minor, reported.currency, workspace_currency, now.date()
            )
        ),
    }
    inserted = insert_row(conn, conversions, row, returning=_IF_NEW)
    if inserted is not None:  # no row back: the key exists, this repeats a conversion
        _append_history(conn, conversion_id, None, reported, postback_id, actor, now)
        outcome = Outcome.CREATED if attribution.click_id else Outcome.ORPHAN
        reason = "" if attribution.click_id else "no click with this id (yet); kept as an orphan"
        change = Change(row, reported.status)
        return Recorded(outcome, reason, conversion_id, reported.status, {}, change)
    existing = _by_key(conn, workspace_id, key)
    return _repeat(conn, existing, reported, value_minor, postback_id, actor, now)


# The dedupe key decides: a conversion whose key exists inserts nothing and returns no id.
_IF_NEW = "ON CONFLICT (workspace_id, dedupe_key) DO NOTHING RETURNING id"


def _repeat(
    conn: Connection,
    existing: Any,
    reported: Reported,
    value_minor: int,
    postback_id: str,
    actor: str,
    now: datetime,
) -> Recorded:
    details: dict[str, Any] = {"existing_status": existing.status}
    if (value_minor, reported.currency) != (existing.value_minor, existing.currency):
        details["stored_value"] = str(from_minor(existing.value_minor, existing.currency))
        details["stored_currency"] = existing.currency
        details["received_value"] = str(rounded(reported.value, reported.currency))
    if reported.status == existing.status:
        return Recorded(
            Outcome.DUPLICATE, "already recorded", existing.id, Status(existing.status), details
        )
    if _older(reported.occurred_at, existing.status_occurred_at):
        reason = (
            f"an event older than the current status ('{reported.occurred_at:%Y-%m-%d %H:%M:%S}' "
            f"< '{existing.status_occurred_at:%Y-%m-%d %H:%M:%S}' UTC); ignored"
        )
        return Recorded(Outcome.IGNORED, reason, existing.id, Status(existing.status), details)
    if (existing.status, reported.status) not in LEGAL_CHANGES:
        reason = f"illegal status change {existing.status} → {reported.status}; ignored"
        return Recorded(Outcome.IGNORED, reason, existing.id, Status(existing.status), details)
    changed = conn.execute(
        update(conversions)
        .where(conversions.c.id == existing.id, conversions.c.status == existing.status)
        .values(
            status=reported.status,
            status_changed_at=now,
            status_occurred_at=reported.occurred_at or existing.status_occurred_at,
        )
    )
    if changed.rowcount == 0:  # another postback changed it first; ours is now a repeat
        current = _by_key(conn, existing.workspace_id, existing.dedupe_key)
        return _repeat(conn, current, reported, value_minor, postback_id, actor, now)
    _append_history(conn, existing.id, existing.status, reported, postback_id, actor, now)
    reason = f"{existing.status} → {reported.status}"
    change = Change(dict(existing._mapping), reported.status)
    return Recorded(Outcome.STATUS_CHANGED, reason, existing.id, reported.status, details, change)


def _older(reported: datetime | None, current: datetime | None) -> bool:
    """Whether the platform says this event happened before the conversion's current status:
    then it arrived out of order, and never overwrites what is newer. Unknown either side: no."""
    return reported is not None and current is not None and reported < current


def _by_key(conn: Connection, workspace_id: str, key: str) -> Any:
    query = select(conversions).where(
        conversions.c.workspace_id == workspace_id, conversions.c.dedupe_key == key
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    return (conn.execute(query)).one()


def _within_window(
    conn: Connection,
    workspace_id: str,
    reported: Reported,
    attribution: Attribution,
    since: datetime,
) -> Any:
    if conn.dialect.name == "postgresql":  # SQLite's BEGIN IMMEDIATE already serialises writers
        lock = f"{workspace_id}:{attribution.raw_click_id}:{reported.event_type}"
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"), {"k": lock})
    return (
        conn.execute(
            select(conversions)
            .where(
                conversions.c.workspace_id == workspace_id,
                conversions.c.raw_click_id == attribution.raw_click_id,
                conversions.c.event_type == reported.event_type,
                conversions.c.created_at > since,
            )
            .order_by(conversions.c.created_at.desc())
            .limit(1)
        )
    ).first()


def _append_history(
    conn: Connection,
    conversion_id: str,
    from_status: str | None,
    reported: Reported,
    postback_id: str | None,
    actor: str,
    now: datetime,
) -> None:
    insert_row(
        conn,
        conversion_status_history,
        {
            "id": new_id(),
            "conversion_id": conversion_id,
            "from_status": from_status,
            "to_status": reported.status,
            "postback_id": postback_id,
            "actor": actor,
            "created_at": now,
            "occurred_at": reported.occurred_at,
        },
    )
