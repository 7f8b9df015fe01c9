"""The postback log: every request as received (secrets masked), its outcome and its reason."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from sqlalchemy import Connection, and_, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.driver import insert_row
from trilha.db.schema import postback_log
from trilha.money import rounded
from trilha.postbacks.mapping import Fields
from trilha.postbacks.raw import RawPostback
from trilha.postbacks.result import Result
from trilha.postbacks.trace import Trace
from trilha.privacy.buyer_fields import ALL_FIELDS
from trilha.privacy.masking import buyer_values, mask_patterns

MASK = "********"
# Shorter secrets are masked only where they are a whole value (a query or form value, a JSON
# string or number, a header): masked inside longer words, "abc" would also hide every "abc"
# of a product name, and left alone it stayed readable.
WHOLE_VALUE_BELOW = 8
MASKER_CACHE_SIZE = 256
STORED_BODY_LIMIT = 256 * 1024
_PERCENT = re.compile(r"%[0-9A-F]{2}")
# What may stand right before and right after a whole value in a query, form, JSON or header.
_VALUE_START = r"(?<![^\s=:\"'\[,&?])"
_VALUE_END = r"(?![^\s&\"',}\]])"
# Headers that carry credentials whatever the merchant: masked whole.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "cookie",
        "x-hotmart-hottok",
        "x-signature",
        "x-eduzzapi",
        "x-api-key",
        "proxy-authorization",
    }
)


def mask(text: str, secrets: list[str]) -> str:
    """Replace every occurrence of each secret, however the request spelled it; longest first,
    so no part of one survives. A short secret is replaced where it is a whole value.

    >>> mask("token=abc123def&x=1&s=p%2Bq%2F1", ["abc123def", "p+q/1"])
    'token=********&x=1&s=********'
    >>> mask('{"k": "abc", "name": "abcde"}', ["abc"])
    '{"k": "********", "name": "abcde"}'
    """
    return secret_masker(secrets)(text)


def secret_masker(
    secrets: list[str], *, buyer_values: list[str] | None = None
) -> Callable[[str], str]:
    """``mask`` with the secrets compiled once, for the many fields of one log entry.

    With ``buyer_values`` (a list, even empty), buyers' personal data is masked too: those
    values, and whatever looks like an e-mail, a CPF, a CNPJ or a phone (trilha.privacy).
    """
    hide = _masker(tuple(sorted(set(secrets))))
    if buyer_values is None:
        return hide
    spellings = sorted(
        {spelling for value in buyer_values for spelling in _buyer_spellings(value)},
        key=len,
        reverse=True,
    )
    return lambda text: mask_patterns(_replace_all(hide(text), spellings))


def _buyer_spellings(value: str) -> set[str]:
    """A buyer's value as sent, JSON-escaped and form-encoded: fewer spellings than a secret's,
    as a value missed here is most often still caught by pattern, and each costs a search."""
    return {value, json.dumps(value)[1:-1], quote_plus(value), quote(value, safe="")}


def _replace_all(text: str, values: list[str]) -> str:
    """Every value replaced wherever it is, longest first. Plain replacing, not one compiled
    pattern as for secrets: each buyer is seen once or twice, and compiling cost more than the
    rest of the postback."""
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    return text


def _compile_masker(secrets: tuple[str, ...]) -> Callable[[str], str]:
    spellings = {
        (spelling, len(secret) < WHOLE_VALUE_BELOW)
        for secret in secrets
        if secret
        for spelling in _spellings(secret)
    }
    if not spellings:
        return str
    pattern = re.compile(
        "|".join(
            f"{_VALUE_START}{re.escape(s)}{_VALUE_END}" if whole else re.escape(s)
            for s, whole in sorted(spellings, key=lambda item: len(item[0]), reverse=True)
        )
    )
    return lambda text: pattern.sub(MASK, text)


# Most postbacks of a workspace carry the same secrets (its token, a merchant's key).
_masker = lru_cache(maxsize=MASKER_CACHE_SIZE)(_compile_masker)


def _spellings(secret: str) -> set[str]:
    """The secret as sent, JSON-escaped (PHP also escapes "/"), and percent-encoded as a query or
    form sends it (upper- or lower-case hex): masking only the plain text let a secret with
    "+", "/" or "=" reach the log encoded."""
    escaped = json.dumps(secret)[1:-1]
    texts = {secret, escaped, escaped.replace("/", "\\/")}
    encoded = {quote(t, safe="") for t in texts} | {quote_plus(t) for t in texts}
    encoded |= {quote(t) for t in texts}  # "/" left as it is
    encoded |= {_PERCENT.sub(lambda m: m.group().lower(), e) for e in encoded}
    return texts | encoded


def header_secrets(headers: Iterable[tuple[str, str]], names: Collection[str]) -> list[str]:
    """The values of the headers that carry a secret, to mask wherever else they appear."""
    return [value for name, value in headers if value and (name in SECRET_HEADERS or name in names)]


def mask_headers(
    headers: Iterable[tuple[str, str]], hide: Callable[[str], str], names: Collection[str]
) -> list[list[str]]:
    """Headers as stored: those that carry a secret (``names`` or SECRET_HEADERS) masked whole,
    the others with any secret in them masked."""
    return [
        [name, MASK if name in SECRET_HEADERS or name in names else hide(value)]
        for name, value in headers
    ]


def write_log(
    conn: Connection,
    raw: RawPostback,
    trace: Trace,
    result: Result,
    *,
    processing_us: int,
    replay_of: str | None,
) -> None:
    hide = secret_masker(
        [*trace.secrets, *header_secrets(raw.headers, trace.secret_headers)],
        buyer_values=None
        if trace.keeps_buyer_data
        else buyer_values(trace.payload or {}, ALL_FIELDS),
    )
    body = raw.body[:STORED_BODY_LIMIT].decode("utf-8", "replace").replace("\x00", "")
    fields = trace.fields
    insert_row(
        conn,
        postback_log,
        {
            "id": trace.postback_id,
            "workspace_id": trace.workspace_id,
            "merchant_id": trace.merchant_id,
            "received_at": raw.received_at,
            "method": raw.method,
            "path": raw.path[:200],
            "query": hide(raw.query),
            "headers": mask_headers(raw.headers, hide, trace.secret_headers),
            "body": hide(body),
            "body_truncated": raw.body_too_large or len(raw.body) > STORED_BODY_LIMIT,
            "source_ip": raw.source_ip,
            "auth_failed": trace.auth_failed,
            "outcome": result.outcome.value,
            "reason": hide(result.reason),
            "conversion_id": result.conversion_id,
            "campaign_id": trace.campaign_id,
            "click_id": trace.click_id,
            "txid": fields.txid if fields else trace.read.get("txid"),
            "event_type": fields.event_type if fields else None,
            "status": fields.status if fields else None,
            "value": _value(fields, trace.currency) if fields else trace.read.get("value"),
            "currency": fields.currency if fields else trace.read.get("currency"),
            "details": {**result.details, **_mapping_details(fields, trace.read)},
            "processing_us": processing_us,
            "replay_of": replay_of,
        },
    )


def _value(fields: Fields, default_currency: str | None) -> str:
    """The value read, in its currency's minor unit."""
    currency = fields.currency or default_currency
    return str(fields.value if currency is None else rounded(fields.value, currency))


def _mapping_details(fields: Fields | None, read: dict[str, str]) -> dict[str, str]:
    """The platform's own words; when the mapping failed, as they were read."""
    words = (
        {"platform_event": read.get("event"), "platform_status": read.get("status")}
        if fields is None
        else {
            "platform_event": fields.platform_event,
            "platform_status": fields.platform_status,
            "value_note": fields.value_note,
        }
    )
    return {k: v for k, v in words.items() if v}


@dataclass(frozen=True, slots=True)
class LogFilter:
    outcome: str | None = None
    merchant_id: str | None = None
    campaign_id: str | None = None
    click_id: str | None = None
    txid: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    before_id: str | None = None


async def list_log(
    conn: AsyncConnection, workspace_id: str, where: LogFilter, *, limit: int = 100
) -> list[dict[str, Any]]:
    """Newest first; page with ``before_id`` set to the last id seen."""
    query = select(postback_log).where(postback_log.c.workspace_id == workspace_id)
    for column, value in (
        ("outcome", where.outcome),
        ("merchant_id", where.merchant_id),
        ("campaign_id", where.campaign_id),
        ("click_id", where.click_id),
        ("txid", where.txid),
    ):
        if value is not None:
            query = query.where(postback_log.c[column] == value)
    if where.since is not None:
        query = query.where(postback_log.c.received_at >= where.since)
    if where.until is not None:
        query = query.where(postback_log.c.received_at < where.until)
    if where.before_id is not None:
        # Ids are random, so the cursor is the row's (received_at, id): an unknown id gives none.
        cursor = (
            select(postback_log.c.received_at)
            .where(
                postback_log.c.id == where.before_id, postback_log.c.workspace_id == workspace_id
            )
            .scalar_subquery()
        )
        query = query.where(
            or_(
                postback_log.c.received_at < cursor,
                and_(postback_log.c.received_at == cursor, postback_log.c.id < where.before_id),
            )
        )
    rows = await conn.execute(
        query.order_by(postback_log.c.received_at.desc(), postback_log.c.id.desc()).limit(limit)
    )
    return [dict(row) for row in rows.mappings()]


async def get_log_entry(
    conn: AsyncConnection, workspace_id: str, entry_id: str
) -> dict[str, Any] | None:
    row = (
        (
            await conn.execute(
                select(postback_log).where(
                    postback_log.c.id == entry_id, postback_log.c.workspace_id == workspace_id
                )
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else dict(row)


def raw_from_log(entry: dict[str, Any], *, received_at: datetime) -> RawPostback:
    """The stored request, to run through the pipeline again."""
    return RawPostback(
        method=entry["method"],
        path=entry["path"],
        query=entry["query"],
        headers=tuple((name, value) for name, value in entry["headers"]),
        body=entry["body"].encode(),
        source_ip=entry["source_ip"],
        host="",
        merchant_key=_merchant_key(entry["path"]),
        received_at=received_at,
    )


def _merchant_key(path: str) -> str | None:
    parts = path.strip("/").split("/")
    return parts[1] if len(parts) == 2 and parts[0] == "pb" and parts[1] else None


async def purge_log(conn: AsyncConnection, *, older_than: datetime, limit: int) -> int:
    """Delete up to ``limit`` entries received before ``older_than``, the oldest first."""
    log = postback_log.c
    oldest = select(log.id).where(log.received_at < older_than).order_by(log.received_at)
    result = await conn.execute(
        delete(postback_log).where(log.id.in_(oldest.limit(limit).scalar_subquery()))
    )
    return result.rowcount
