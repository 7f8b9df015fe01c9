"""Postbacks no workspace claims (no token, an unknown one, a host that is no custom domain):
counted per source and hour, the first few sampled (cut short, secrets masked), never stored
whole, and kept only briefly. Only the instance's operator sees them (`trilha postbacks
unmatched`, and an hourly line in the server log).

Whatever a flood sends, it adds at most MAX_SOURCES counter rows and SAMPLED_SOURCES times
SAMPLES_PER_SOURCE samples of a few KiB an hour.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, case, delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.driver import insert_row
from trilha.db.schema import unmatched_postbacks, unmatched_samples
from trilha.ids import new_id
from trilha.postbacks.log import header_secrets, mask_headers, secret_masker
from trilha.postbacks.payload import PayloadError, Received, Tree, pairs_to_tree, parse_form
from trilha.postbacks.secret_fields import KNOWN_SECRET_FIELDS, KNOWN_SECRET_HEADERS, values_at
from trilha.privacy.buyer_fields import ALL_FIELDS
from trilha.privacy.masking import buyer_values
from trilha.visitors import address_block

SAMPLES_PER_SOURCE = 3  # each hour
SAMPLED_SOURCES = 20  # the first sources of each hour have samples kept
MAX_SOURCES = 1000  # each hour; later sources are counted together, as OTHER_SOURCES
OTHER_SOURCES = "other"
SAMPLE_BODY = 2048  # characters kept of a sample's body
SAMPLE_QUERY = 1024
SAMPLE_HEADERS = 30
SAMPLE_HEADER_VALUE = 200
_UPSERT = (
    "ON CONFLICT (hour, source) DO UPDATE SET requests = unmatched_postbacks.requests + 1,"
    " last_at = excluded.last_at RETURNING requests, sampled"
)


def source_of(ip: str) -> str:
    """What a request is counted under: its address, or its IPv6 /64, which one machine may
    hold whole.

    >>> source_of("2001:db8:1:2:3:4:5:6"), source_of("198.51.100.7")
    ('2001:db8:1:2::/64', '198.51.100.7')
    """
    return address_block(ip)[:45]


def record_unmatched(conn: Connection, received: Received, reason: str, secrets: list[str]) -> None:
    """Count the request; keep it as a sample if it is among the first of its source's hour.
    ``secrets``: what the pipeline knew to mask (the token it was sent)."""
    raw = received.raw
    hour = raw.received_at.replace(minute=0, second=0, microsecond=0)
    source, sources = _counted_source(conn, hour, source_of(raw.source_ip))
    requests, sampled = insert_row(
        conn,
        unmatched_postbacks,
        {
            "hour": hour,
            "source": source,
            "requests": 1,
            "sampled": source != OTHER_SOURCES and sources < SAMPLED_SOURCES,
            "first_at": raw.received_at,
            "last_at": raw.received_at,
        },
        returning=_UPSERT,
    )
    if sampled and requests <= SAMPLES_PER_SOURCE:
        insert_row(conn, unmatched_samples, _sample(received, reason, secrets, source))


def _counted_source(conn: Connection, hour: datetime, source: str) -> tuple[str, int]:
    """``source`` (or OTHER_SOURCES when the hour already counts MAX_SOURCES others), and how
    many sources the hour counts."""
    row = conn.execute(
        select(
            func.count(),
            func.max(case((unmatched_postbacks.c.source == source, 1), else_=0)),
        ).where(unmatched_postbacks.c.hour == hour)
    ).one()
    sources, known = int(row[0]), bool(row[1])
    return (OTHER_SOURCES if sources >= MAX_SOURCES and not known else source), sources


def _sample(received: Received, reason: str, secrets: list[str], source: str) -> dict[str, Any]:
    """The request, masked whole before it is cut, so that no cut secret is left readable."""
    raw = received.raw
    payload = {} if isinstance(received.body, PayloadError) else received.body
    query = _tree(raw.query)
    hide = secret_masker(
        [
            *secrets,
            *values_at(KNOWN_SECRET_FIELDS, payload, query),
            *header_secrets(raw.headers, KNOWN_SECRET_HEADERS),
        ],
        buyer_values=buyer_values(payload, ALL_FIELDS),
    )
    body = raw.body.decode("utf-8", "replace").replace("\x00", "")
    return {
        "id": new_id(),
        "hour": raw.received_at.replace(minute=0, second=0, microsecond=0),
        "source": source,
        "received_at": raw.received_at,
        "source_ip": raw.source_ip,
        "method": raw.method[:8],
        "path": raw.path[:200],
        "host": raw.host[:253],
        "query": hide(raw.query)[:SAMPLE_QUERY],
        "headers": [
            [name[:SAMPLE_HEADER_VALUE], value[:SAMPLE_HEADER_VALUE]]
            for name, value in mask_headers(
                raw.headers[:SAMPLE_HEADERS], hide, KNOWN_SECRET_HEADERS
            )
        ],
        "body": hide(body)[:SAMPLE_BODY],
        "body_bytes": len(raw.body),
        "reason": hide(reason),
    }


def _tree(query: str) -> Tree:
    try:
        return pairs_to_tree(parse_form(query))
    except PayloadError:
        return {}


@dataclass(frozen=True, slots=True)
class SourceCount:
    source: str
    requests: int
    first_at: datetime
    last_at: datetime


@dataclass(frozen=True, slots=True)
class Sample:
    received_at: datetime
    source_ip: str
    method: str
    path: str
    host: str
    query: str
    headers: list[list[str]]
    body: str
    body_bytes: int
    reason: str


async def count_unmatched(
    conn: AsyncConnection, *, since: datetime, limit: int = 50
) -> list[SourceCount]:
    """Requests per source seen since ``since``, most first."""
    requests = func.sum(unmatched_postbacks.c.requests)
    rows = await conn.execute(
        select(
            unmatched_postbacks.c.source,
            requests,
            func.min(unmatched_postbacks.c.first_at),
            func.max(unmatched_postbacks.c.last_at),
        )
        .where(unmatched_postbacks.c.last_at >= since)
        .group_by(unmatched_postbacks.c.source)
        .order_by(requests.desc(), unmatched_postbacks.c.source)
        .limit(limit)
    )
    return [SourceCount(row[0], int(row[1]), row[2], row[3]) for row in rows]


async def list_samples(conn: AsyncConnection, *, since: datetime, limit: int = 50) -> list[Sample]:
    """The samples received since ``since``, newest first."""
    rows = await conn.execute(
        select(unmatched_samples)
        .where(unmatched_samples.c.received_at >= since)
        .order_by(unmatched_samples.c.received_at.desc(), unmatched_samples.c.id)
        .limit(limit)
    )
    return [
        Sample(
            received_at=row.received_at,
            source_ip=row.source_ip,
            method=row.method,
            path=row.path,
            host=row.host,
            query=row.query,
            headers=row.headers,
            body=row.body,
            body_bytes=row.body_bytes,
            reason=row.reason,
        )
        for row in rows
    ]


async def purge_unmatched(conn: AsyncConnection, *, older_than: datetime) -> int:
    """Drop the counts and samples of the hours before ``older_than``."""
    await conn.execute(delete(unmatched_samples).where(unmatched_samples.c.hour < older_than))
    result = await conn.execute(
        delete(unmatched_postbacks).where(unmatched_postbacks.c.hour < older_than)
    )
    return result.rowcount


def report_lines(sources: list[SourceCount], samples: list[Sample]) -> list[str]:
    """The counts and samples as the operator reads them in a terminal."""
    if not sources:
        return []
    lines = [f"{'source':<45} {'requests':>8}  first seen (UTC)     last seen (UTC)"]
    lines += [
        f"{s.source:<45} {s.requests:>8}  {_when(s.first_at)}  {_when(s.last_at)}" for s in sources
    ]
    if samples:
        lines += ["", f"Samples (the first {SAMPLES_PER_SOURCE} of a source each hour, cut short):"]
    for sample in samples:
        cut = " (cut)" if sample.body_bytes > len(sample.body.encode()) else ""
        lines += [
            "",
            f"{_when(sample.received_at)}  {sample.source_ip}  {sample.method} {sample.path}"
            f"  host {sample.host or '-'}: {sample.reason}",
            f"  query: {sample.query}",
            f"  headers: {'; '.join(f'{name}: {value}' for name, value in sample.headers)}",
            f"  body ({sample.body_bytes} bytes{cut}): {sample.body}",
        ]
    return lines


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
