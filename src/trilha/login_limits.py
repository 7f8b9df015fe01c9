"""How many sign-in attempts an account (e-mail) and a client address may make in a window of time.

The counts live in the database, so every process and machine serving one database shares them.
A key's window starts with its first attempt and lasts the configured minutes; an attempt is
counted before its password is checked, by one conditional upsert whose row count decides, so
attempts made at the same moment cannot slip past the limit. A successful sign-in gives its
attempt back: only failures count. Unknown e-mails are counted like known ones, so the answers
tell nothing about who has an account.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import Insert, case, delete, literal, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import login_attempts
from trilha.errors import TooManyRequests
from trilha.visitors import address_block

if TYPE_CHECKING:
    from trilha.settings import Settings


class LimitKind(StrEnum):
    ACCOUNT = "account"
    IP = "ip"


@dataclass(frozen=True, slots=True)
class LoginLimits:
    per_account: int
    per_ip: int
    window: timedelta

    @classmethod
    def of(cls, settings: Settings) -> LoginLimits:
        return cls(
            per_account=settings.login_limit_per_account,
            per_ip=settings.login_limit_per_ip,
            window=timedelta(minutes=settings.login_limit_window_minutes),
        )


@dataclass(frozen=True, slots=True)
class _Count:
    kind: LimitKind
    key_hash: str
    window_end: datetime


@dataclass(frozen=True, slots=True)
class Attempt:
    """A counted attempt: the counts it raised, to give back if the password was right."""

    counts: tuple[_Count, ...]


async def count_attempt(
    conn: AsyncConnection, limits: LoginLimits, *, email: str, ip: str, now: datetime
) -> Attempt:
    """Count one attempt against the e-mail and the address, or raise TooManyRequests (with the
    seconds until the window ends) when either has used its limit; then nothing is counted, as
    long as the caller rolls the transaction back."""
    limit = {LimitKind.ACCOUNT: limits.per_account, LimitKind.IP: limits.per_ip}
    keys = (
        (LimitKind.ACCOUNT, _key_hash(LimitKind.ACCOUNT, email.strip().lower())),
        (LimitKind.IP, _key_hash(LimitKind.IP, address_block(ip))),
    )
    counted = []
    for kind, key_hash in keys:
        window_end = await _raise_count(conn, kind, key_hash, limits, limit=limit[kind], now=now)
        if window_end is None:
            raise TooManyRequests(
                "too many sign-in attempts",
                retry_after=await _seconds_left(conn, kind, key_hash, now),
            )
        counted.append(_Count(kind, key_hash, window_end))
    return Attempt(tuple(counted))


async def give_back(conn: AsyncConnection, attempt: Attempt) -> None:
    for count in attempt.counts:
        await conn.execute(
            update(login_attempts)
            .where(
                login_attempts.c.kind == count.kind,
                login_attempts.c.key_hash == count.key_hash,
                login_attempts.c.window_end == count.window_end,  # not a later window's count
                login_attempts.c.attempts > 0,
            )
            .values(attempts=login_attempts.c.attempts - 1)
        )


async def purge_attempts(conn: AsyncConnection, *, now: datetime) -> int:
    """Drop the counts of windows that have ended; returns how many rows went."""
    result = await conn.execute(delete(login_attempts).where(login_attempts.c.window_end <= now))
    return result.rowcount


async def _raise_count(
    conn: AsyncConnection,
    kind: LimitKind,
    key_hash: str,
    limits: LoginLimits,
    *,
    limit: int,
    now: datetime,
) -> datetime | None:
    """One more attempt for the key, unless its window has ``limit`` already; the end of the
    window it was counted in, or None when it was not.

    An ended window starts afresh. On PostgreSQL a concurrent upsert of the same row waits for
    this one and then sees its count; SQLite runs one writer at a time.
    """
    table = login_attempts.c
    has_ended = table.window_end <= now
    new_end = now + limits.window
    row = {"kind": kind, "key_hash": key_hash, "window_end": new_end, "attempts": 1}
    raised = {
        "attempts": case((has_ended, 1), else_=table.attempts + 1),
        "window_end": case(
            (has_ended, literal(new_end, table.window_end.type)), else_=table.window_end
        ),
    }
    may_count = or_(has_ended, table.attempts < limit)
    key = [table.kind, table.key_hash]
    statement: Insert
    if conn.dialect.name == "postgresql":
        statement = (
            postgresql.insert(login_attempts)
            .values(row)
            .on_conflict_do_update(index_elements=key, set_=raised, where=may_count)
        )
    else:
        statement = (
            sqlite.insert(login_attempts)
            .values(row)
            .on_conflict_do_update(index_elements=key, set_=raised, where=may_count)
        )
    counted = await conn.execute(statement.returning(table.window_end))
    window_end: datetime | None = counted.scalar_one_or_none()
    return window_end


async def _seconds_left(
    conn: AsyncConnection, kind: LimitKind, key_hash: str, now: datetime
) -> int:
    window_end: datetime = (
        await conn.execute(
            select(login_attempts.c.window_end).where(
                login_attempts.c.kind == kind, login_attempts.c.key_hash == key_hash
            )
        )
    ).scalar_one()
    return max(1, math.ceil((window_end - now).total_seconds()))


def _key_hash(kind: LimitKind, value: str) -> str:
    # Of a fixed length whatever was typed, and no e-mail kept in clear (a digest, not a secret).
    return hashlib.sha256(f"{kind}:{value}".encode()).hexdigest()
