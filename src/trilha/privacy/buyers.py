"""What trilha keeps of a buyer: a conversion's hashes, and the retention after which stored
payloads are emptied ("forget this buyer" is trilha.privacy.forget).

Log entries keep their outcome, reason and read fields when their payload goes: only the
request as received (query, headers, body) is emptied, and ``payload_purged_at`` says when.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, select, update

from trilha.db.schema import conversions, postback_log
from trilha.errors import NotFound
from trilha.privacy.hashes import BuyerHashes

EMPTY_PAYLOAD: dict[str, Any] = {"query": "", "headers": [], "body": ""}


def buyer_hashes(conn: Connection, workspace_id: str, conversion_id: str) -> BuyerHashes:
    """The hashed e-mail and phone a conversion keeps, for conversion APIs to match on."""
    c = conversions.c
    row = conn.execute(
        select(c.buyer_email_sha256, c.buyer_phone_sha256).where(
            c.id == conversion_id, c.workspace_id == workspace_id
        )
    ).first()
    if row is None:
        raise NotFound("conversion not found")
    return BuyerHashes(email_sha256=row[0], phone_sha256=row[1])


def purge_payloads(conn: Connection, *, older_than: datetime, now: datetime, limit: int) -> int:
    """Empty up to ``limit`` stored requests received before ``older_than``, the oldest first;
    their entries stay."""
    log = postback_log.c
    oldest = (
        select(log.id)
        .where(log.received_at < older_than, log.payload_purged_at.is_(None))
        .order_by(log.received_at)
        .limit(limit)
    )
    return conn.execute(
        update(postback_log)
        .where(log.id.in_(oldest.scalar_subquery()))
        .values(**EMPTY_PAYLOAD, payload_purged_at=now)
    ).rowcount
