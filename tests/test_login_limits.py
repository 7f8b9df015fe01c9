"""Sign-in limits per e-mail and per client address, counted in the database per window of time."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import PASSWORD, fetch_all, make_user
from trilha.accounts import NewSession, sign_in
from trilha.db.schema import login_attempts
from trilha.errors import TooManyRequests
from trilha.login_limits import Attempt, LoginLimits, count_attempt, purge_attempts

LIMITS = LoginLimits(per_account=3, per_ip=100, window=timedelta(minutes=15))
T0 = datetime(2026, 12, 4, 16, 7, 30, tzinfo=UTC)


async def _count(db: AsyncEngine, now: datetime, *, email: str = "ana@example.com") -> Attempt:
    async with db.begin() as conn:
        return await count_attempt(conn, LIMITS, email=email, ip="203.0.113.9", now=now)


async def test_it_refuses_attempts_past_the_limit_until_the_window_ends(db: AsyncEngine) -> None:
    for _ in range(3):
        await _count(db, T0)

    with pytest.raises(TooManyRequests) as refused:
        await _count(db, T0 + timedelta(minutes=14, seconds=30))
    await _count(db, T0 + timedelta(minutes=15))  # the window has ended: a new one starts

    assert refused.value.retry_after == 30
    assert refused.value.status_code == 429


async def test_it_counts_an_e_mail_however_it_is_typed(db: AsyncEngine) -> None:
    for email in ("ana@example.com", " Ana@Example.com", "ANA@EXAMPLE.COM "):
        await _count(db, T0, email=email)

    with pytest.raises(TooManyRequests):
        await _count(db, T0)


async def test_a_refused_attempt_is_not_counted(db: AsyncEngine) -> None:
    for _ in range(3):
        await _count(db, T0)
    for _ in range(5):
        with pytest.raises(TooManyRequests):
            await _count(db, T0)

    rows = await fetch_all(db, login_attempts, kind="ip")
    assert [row["attempts"] for row in rows] == [3]


async def test_attempts_made_at_once_cannot_slip_past_the_limit(db: AsyncEngine) -> None:
    async def attempt() -> bool:
        try:
            await _count(db, T0)
        except TooManyRequests:
            return False
        return True

    counted = await asyncio.gather(*(attempt() for _ in range(20)))

    assert counted.count(True) == 3


async def test_a_wrong_password_counts_and_a_right_one_after_the_window_signs_in(
    db: AsyncEngine,
) -> None:
    user = await make_user(db, email="ana@example.com")

    async def try_password(password: str, now: datetime) -> NewSession | None:
        return await sign_in(
            db, LIMITS, email="ana@example.com", password=password, client_ip="::1", now=now
        )

    assert [await try_password("not the password", T0) for _ in range(3)] == [None] * 3
    with pytest.raises(TooManyRequests):
        await try_password(PASSWORD, T0)
    signed_in = await try_password(PASSWORD, T0 + timedelta(minutes=15))

    assert signed_in is not None
    assert signed_in.user == user


async def test_a_successful_sign_in_gives_its_attempt_back(db: AsyncEngine) -> None:
    await make_user(db, email="ana@example.com")
    limits = LoginLimits(per_account=3, per_ip=3, window=timedelta(minutes=15))

    async def try_password(email: str, password: str) -> NewSession | None:
        return await sign_in(db, limits, email=email, password=password, client_ip="::1", now=T0)

    for _ in range(5):  # say, an office behind one address, where everyone signs in
        assert await try_password("ana@example.com", PASSWORD) is not None
    failures = [await try_password("bia@example.com", "not the password") for _ in range(3)]

    assert failures == [None] * 3
    with pytest.raises(TooManyRequests):
        await try_password("carla@example.com", "not the password")


async def test_the_counts_of_ended_windows_are_purged(db: AsyncEngine) -> None:
    await _count(db, T0, email="ana@example.com")
    await _count(db, T0 + timedelta(minutes=1), email="bia@example.com")

    async with db.begin() as conn:
        purged = await purge_attempts(conn, now=T0 + timedelta(minutes=15))

    assert purged == 2  # ana's and the address's, whose windows started at T0
    [left] = await fetch_all(db, login_attempts)
    assert (left["kind"], left["window_end"]) == ("account", T0 + timedelta(minutes=16))
