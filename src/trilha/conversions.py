"""Conversions: record once per dedupe key, change status only along legal paths, keep history.

The first value recorded is never overwritten. A repeated postback is `duplicate`; a legal status
change (pending → approved, approved → refunded, ...) updates the current status and appends a
history row; anything else is `ignored` and logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, select, text, update

from trilha.db.driver import fetch_one, insert_row
from trilha.db.schema import clicks, conversion_status_history, conversions
from trilha.errors import InvalidInput, NotFound
from trilha.ids import new_id
from trilha.money import from_minor, to_minor
from trilha.postbacks.mapping import Fields
from trilha.postbacks.outcome import Outcome
from trilha.postbacks.preset import Status

LEGAL_CHANGES = frozenset(
    {
        (Status.PENDING, Status.APPROVED),
        (Status.PENDING, Status.DECLINED),
        (Status.APPROVED, Status.REFUNDED),
        (Status.APPROVED, Status.CHARGEBACK),
    }
)


@dataclass(frozen=True, slots=True)
class Recorded:
    outcome: Outcome
    reason: str
    conversion_id: str
    details: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Attribution:
    """The click a conversion lands on, or the raw id of an unknown click (an orphan)."""

    raw_click_id: str
    click_id: str | None
    campaign_id: str | None
    source_id: str | None


def dedupe_key(mode: str, fields: Fields, attribution: Attribution, postback_id: str) -> str:
    """The UNIQUE key that makes a repeat a duplicate (FTD: once per click, always).

    >>> from decimal import Decimal
    >>> f = Fields("c1", "SALE", "approved", Decimal(1), None, "T1", None, None)
    >>> dedupe_key("txid", f, Attribution("c1", "c1", None, None), "p1")
    'tx:T1'
    """
    click = attribution.raw_click_id
    if fields.event_type == "FTD":
        return f"ftd:{click}"
    if mode in ("txid", "allow_repeats") and fields.txid:
        return f"tx:{fields.txid}"
    if mode == "allow_repeats":
        return f"pb:{postback_id}"
    if mode == "window":
        return f"win:{click}:{fields.event_type}:{postback_id}"
    return f"click:{click}:{fields.event_type}"


def record_conversion(
    conn: Connection,
    *,
    workspace_id: str,
    merchant_id: str | None,
    fields: Fields,
    attribution: Attribution,
    currency: str,
    mode: str,
    window: timedelta,
    postback_id: str,
    actor: str,
    now: datetime,
) -> Recorded:
    """Insert the conversion, or find the one it repeats and apply a status change."""
    value_minor = to_minor(fields.value, currency)
    if mode == "window":
        existing = _within_window(conn, workspace_id, fields, attribution, now - window)
        if existing is not None:
            return _repeat(conn, existing, fields, value_minor, currency, postback_id, actor, now)
    key = dedupe_key(mode, fields, attribution, postback_id)
    conversion_id = new_id()
    inserted = insert_row(
        conn,
        conversions,
        {
            "id": conversion_id,
            "workspace_id": workspace_id,
            "click_id": attribution.click_id,
            "raw_click_id": attribution.raw_click_id,
            "campaign_id": attribution.campaign_id,
            "source_id": attribution.source_id,
            "merchant_id": merchant_id,
            "event_type": fields.event_type,
            "status": fields.status,
            "value_minor": value_minor,
            "currency": currency,
            "txid": fields.txid,
            "dedupe_key": key,
            "created_at": now,
            "status_changed_at": now,
        },
        returning=_IF_NEW,
    )
    if inserted is not None:  # no row back: the key exists, this repeats a conversion
        _append_history(conn, conversion_id, None, fields.status, postback_id, actor, now)
        outcome = Outcome.CREATED if attribution.click_id else Outcome.ORPHAN
        reason = "" if attribution.click_id else "no click with this id (yet); kept as an orphan"
        return Recorded(outcome, reason, conversion_id, {})
    existing = _by_key(conn, workspace_id, key)
    return _repeat(conn, existing, fields, value_minor, currency, postback_id, actor, now)


# The dedupe key decides: a conversion whose key exists inserts nothing and returns no id.
_IF_NEW = "ON CONFLICT (workspace_id, dedupe_key) DO NOTHING RETURNING id"


def _repeat(
    conn: Connection,
    existing: Any,
    fields: Fields,
    value_minor: int,
    currency: str,
    postback_id: str,
    actor: str,
    now: datetime,
) -> Recorded:
    details: dict[str, Any] = {"existing_status": existing.status}
    if (value_minor, currency) != (existing.value_minor, existing.currency):
        details["stored_value"] = str(from_minor(existing.value_minor, existing.currency))
        details["stored_currency"] = existing.currency
        details["received_value"] = str(fields.value)
    if fields.status == existing.status:
        return Recorded(Outcome.DUPLICATE, "already recorded", existing.id, details)
    if (existing.status, fields.status) not in LEGAL_CHANGES:
        reason = f"illegal status change {existing.status} → {fields.status}; ignored"
        return Recorded(Outcome.IGNORED, reason, existing.id, details)
    changed = conn.execute(
        update(conversions)
        .where(conversions.c.id == existing.id, conversions.c.status == existing.status)
        .values(status=fields.status, status_changed_at=now)
    )
    if changed.rowcount == 0:  # another postback changed it first; ours is now a repeat
        current = _by_key(conn, existing.workspace_id, existing.dedupe_key)
        return _repeat(conn, current, fields, value_minor, currency, postback_id, actor, now)
    _append_history(conn, existing.id, existing.status, fields.status, postback_id, actor, now)
    return Recorded(
        Outcome.STATUS_CHANGED, f"{existing.status} → {fields.status}", existing.id, details
    )


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
    fields: Fields,
    attribution: Attribution,
    since: datetime,
) -> Any:
    if conn.dialect.name == "postgresql":  # SQLite's BEGIN IMMEDIATE already serialises writers
        lock = f"{workspace_id}:{attribution.raw_click_id}:{fields.event_type}"
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:k, 0))"), {"k": lock})
    return (
        conn.execute(
            select(conversions)
            .where(
                conversions.c.workspace_id == workspace_id,
                conversions.c.raw_click_id == attribution.raw_click_id,
                conversions.c.event_type == fields.event_type,
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
    to_status: str,
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
            "to_status": to_status,
            "postback_id": postback_id,
            "actor": actor,
            "created_at": now,
        },
    )


_CLICK = """
SELECT clicks.id, clicks.campaign_id, clicks.source_id, campaigns.merchant_id
FROM clicks JOIN campaigns ON campaigns.id = clicks.campaign_id
WHERE clicks.id = :click_id AND clicks.workspace_id = :workspace_id
"""


def find_click(conn: Connection, workspace_id: str, click_id: str) -> Attribution:
    attribution, _ = find_click_and_merchant(conn, workspace_id, click_id)
    return attribution


def find_click_and_merchant(
    conn: Connection, workspace_id: str, click_id: str
) -> tuple[Attribution, str | None]:
    """The click (or an orphan's attribution) and the merchant of its campaign, if any."""
    row = fetch_one(conn, _CLICK, {"click_id": click_id, "workspace_id": workspace_id})
    if row is None:
        return Attribution(click_id, None, None, None), None
    found, campaign_id, source_id, merchant_id = row
    return Attribution(click_id, found, campaign_id, source_id), merchant_id


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
            .join(
                clicks,
                (clicks.c.id == conversions.c.raw_click_id)
                & (clicks.c.workspace_id == conversions.c.workspace_id),
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
    conn.execute(
        update(conversions)
        .where(conversions.c.id == conversion_id, conversions.c.click_id.is_(None))
        .values(click_id=click_id, campaign_id=campaign_id, source_id=source_id, attached_at=now)
    )
