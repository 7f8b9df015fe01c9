"""Accounts: the first-start setup link, passwords and API keys."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import PASSWORD, make_api_key, make_user, now
from trilha.accounts import (
    create_setup_token,
    find_api_key,
    find_session,
    is_setup_token_valid,
    revoke_api_key,
    start_session,
    use_setup_token,
)
from trilha.db.schema import api_keys, users
from trilha.passwords import check_password


async def test_a_setup_link_works_once_and_spends_every_other_link(db: AsyncEngine) -> None:
    async with db.begin() as conn:
        first = await create_setup_token(conn, now=now())
        second = await create_setup_token(conn, now=now())

    async with db.begin() as conn:
        assert await use_setup_token(conn, first, now=now())
    async with db.begin() as conn:
        assert not await use_setup_token(conn, first, now=now())
        assert not await is_setup_token_valid(conn, second)


async def test_a_setup_link_stops_working_once_any_account_exists(db: AsyncEngine) -> None:
    async with db.begin() as conn:
        token = await create_setup_token(conn, now=now())
    await make_user(db)  # e.g. with `trilha user create`

    async with db.begin() as conn:
        assert not await is_setup_token_valid(conn, token)
        assert not await use_setup_token(conn, token, now=now())


async def test_passwords_are_stored_as_argon2id_hashes(db: AsyncEngine) -> None:
    user = await make_user(db, email="Ana@Example.com")

    async with db.connect() as conn:
        stored = (await conn.execute(select(users.c.password_hash))).scalar_one()

    assert stored.startswith("$argon2id$")
    assert user.email == "ana@example.com"
    assert await check_password(stored, PASSWORD)
    assert not await check_password(stored, "wrong one!")
    assert not await check_password(None, PASSWORD)


async def test_api_keys_are_stored_hashed_and_stop_working_when_revoked(db: AsyncEngine) -> None:
    user = await make_user(db)
    secret = await make_api_key(db, user)

    async with db.begin() as conn:
        [row] = (await conn.execute(select(api_keys))).mappings().all()
        assert secret not in row.values()
        found = await find_api_key(conn, secret)
        assert found is not None
        assert found.user == user
        await revoke_api_key(conn, user, row["id"], now=now())
    async with db.connect() as conn:
        assert await find_api_key(conn, secret) is None


async def test_sessions_expire(db: AsyncEngine) -> None:
    user = await make_user(db)
    async with db.begin() as conn:
        token = await start_session(conn, user, now=now())

    async with db.connect() as conn:
        assert (await find_session(conn, token, now=now())) is not None
        assert await find_session(conn, token, now=now() + timedelta(days=15)) is None
