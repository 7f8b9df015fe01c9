"""What trilha keeps of a buyer, and erasing it: a conversion's hashes, "forget this buyer",
and the retention after which stored payloads are emptied.

Log entries keep their outcome, reason and read fields when their payload goes: only the
request as received (query, headers, body) is emptied, and ``payload_purged_at`` says when.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection, Text, cast, delete, func, or_, select, update

from trilha.db.schema import conversions, postback_log, unmatched_samples
from trilha.errors import InvalidInput, NotFound
from trilha.privacy.hashes import BuyerHashes, normalise_email, sha256_hex
from trilha.privacy.masking import is_valid_document

EMPTY_PAYLOAD: dict[str, Any] = {"query": "", "headers": [], "body": ""}


@dataclass(frozen=True, slots=True)
class Forgotten:
    """How many rows "forget this buyer" touched, per kind."""

    log_entries: int
    conversions: int
    unmatched_samples: int


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


def forget_buyer(
    conn: Connection,
    workspace_id: str,
    *,
    email: str | None = None,
    cpf: str | None = None,
    now: datetime,
) -> Forgotten:
    """Erase a buyer, named by e-mail or CPF/CNPJ: the workspace's log payloads that hold them
    or belong to their conversions, those conversions' hashes, and unmatched samples."""
    spellings, email_hash = _spellings(email, cpf)
    log_ids, conversion_ids = _log_entries_naming(conn, workspace_id, spellings)
    if email_hash is not None:
        conversion_ids |= set(
            conn.execute(
                select(conversions.c.id).where(
                    conversions.c.workspace_id == workspace_id,
                    conversions.c.buyer_email_sha256 == email_hash,
                )
            ).scalars()
        )
    log = postback_log.c
    purged = conn.execute(
        update(postback_log)
        .where(
            log.workspace_id == workspace_id,
            or_(log.id.in_(log_ids), log.conversion_id.in_(conversion_ids)),
        )
        .values(**EMPTY_PAYLOAD, payload_purged_at=now)
    ).rowcount
    c = conversions.c
    unhashed = conn.execute(
        update(conversions)
        .where(
            c.workspace_id == workspace_id,
            c.id.in_(conversion_ids),
            or_(c.buyer_email_sha256.is_not(None), c.buyer_phone_sha256.is_not(None)),
        )
        .values(buyer_email_sha256=None, buyer_phone_sha256=None)
    ).rowcount
    s = unmatched_samples.c
    samples = conn.execute(
        delete(unmatched_samples).where(_names_any((s.query, s.body, s.headers), spellings))
    ).rowcount
    return Forgotten(log_entries=purged, conversions=unhashed, unmatched_samples=samples)


def purge_payloads(conn: Connection, *, older_than: datetime, now: datetime) -> int:
    """Empty the stored requests received before ``older_than``; their entries stay."""
    log = postback_log.c
    return conn.execute(
        update(postback_log)
        .where(log.received_at < older_than, log.payload_purged_at.is_(None))
        .values(**EMPTY_PAYLOAD, payload_purged_at=now)
    ).rowcount


def _spellings(email: str | None, cpf: str | None) -> tuple[list[str], str | None]:
    """How the buyer may be written in a stored request (lower case), and their e-mail's hash."""
    if (email is None) == (cpf is None):
        raise InvalidInput({"email": "give the buyer's e-mail or CPF/CNPJ, one of them"})
    if email is not None:
        normalised = normalise_email(email[:320])
        if normalised is None:
            raise InvalidInput({"email": "not an e-mail address"})
        return sorted({normalised, quote(normalised, safe="").lower()}), sha256_hex(normalised)
    digits = "".join(ch for ch in str(cpf)[:40] if ch.isascii() and ch.isdigit())
    if not is_valid_document(digits):
        raise InvalidInput({"cpf": "not a valid CPF or CNPJ"})
    if len(digits) == 11:
        formatted = [f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"]
    else:
        head = f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}"
        tail = f"{digits[8:12]}-{digits[12:]}"
        formatted = [f"{head}{slash}{tail}" for slash in ("/", "%2f", "\\/")]
    return [digits, *formatted], None


def _log_entries_naming(
    conn: Connection, workspace_id: str, spellings: list[str]
) -> tuple[set[str], set[str]]:
    """Ids of the workspace's log entries whose payload names the buyer, and their conversions."""
    log = postback_log.c
    rows = conn.execute(
        select(log.id, log.conversion_id).where(
            log.workspace_id == workspace_id,
            log.payload_purged_at.is_(None),
            _names_any((log.query, log.body, log.headers), spellings),
        )
    ).all()
    return {row.id for row in rows}, {row.conversion_id for row in rows if row.conversion_id}


def _names_any(columns: tuple[Any, ...], spellings: list[str]) -> Any:
    return or_(
        *(
            func.lower(cast(column, Text)).contains(spelling, autoescape=True)
            for column in columns
            for spelling in spellings
        )
    )
