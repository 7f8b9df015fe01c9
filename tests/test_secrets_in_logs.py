"""Database errors show no statement parameters: tokens, hashes and e-mails stay out of logs
and tracebacks, in the app and in a real `trilha serve` process."""

from __future__ import annotations

import os
import signal
import traceback
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.logcapture import trilha_lines
from tests.refusals import refuse_inserts
from tests.test_serve import trilha_serve
from trilha.accounts import create_setup_token
from trilha.db.driver import Cursor, driver_sql
from trilha.db.engine import blocking_engine, make_engine
from trilha.db.schema import users
from trilha.ids import hash_secret

EMAIL = "canary-owner-7d41@example.com"
PASSWORD = "canary password 5be2c91f"
CSRF = "canary-csrf-0a9e41c7d2"


async def _setup_token(db: AsyncEngine) -> str:
    async with db.begin() as conn:
        return await create_setup_token(conn, now=datetime.now(UTC))


def _setup_form() -> dict[str, str]:
    return {
        "email": EMAIL,
        "user_name": "Owner",
        "password": PASSWORD,
        "name": "Shop",
        "csrf_token": CSRF,
    }


def _secrets(token: str) -> list[str]:
    return [EMAIL, PASSWORD, CSRF, token, hash_secret(token)]


async def test_a_failing_statement_in_a_request_shows_none_of_its_parameters(
    client: httpx.AsyncClient, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    token = await _setup_token(db)
    await refuse_inserts(db, "users")
    client.cookies.set("trilha_csrf", CSRF)

    # trilha's own lines too: its logger does not propagate to where caplog listens.
    with trilha_lines(caplog), pytest.raises(SQLAlchemyError) as raised:
        await client.post(f"/setup/{token}", data=_setup_form())

    shown = "".join(traceback.format_exception(raised.value)) + caplog.text
    assert "INSERT INTO users" in shown
    for secret in _secrets(token):
        assert secret not in shown


async def test_a_failing_statement_on_the_driver_cursor_shows_none_of_its_parameters(
    database_url: str, db: AsyncEngine
) -> None:
    await refuse_inserts(db, "users")
    engine = make_engine(database_url)
    blocking = blocking_engine(engine)
    try:
        with blocking.connect() as conn, conn.begin():
            driver = conn.connection.driver_connection
            assert driver is not None
            cursor = Cursor(conn, driver.cursor())
            sql = driver_sql(
                "INSERT INTO users (id, email, password_hash, created_at) "
                "VALUES (:id, :email, :hash, :at)",
                conn.dialect.paramstyle,
            )

            with pytest.raises(SQLAlchemyError) as raised:
                cursor.execute(
                    sql, {"id": "u1", "email": EMAIL, "hash": PASSWORD, "at": "2026-01-01"}
                )
    finally:
        blocking.dispose()
        await engine.dispose()

    shown = "".join(traceback.format_exception(raised.value))
    assert "INSERT INTO users" in shown
    assert EMAIL not in shown
    assert PASSWORD not in shown


async def test_a_failing_statement_in_trilha_serve_logs_none_of_its_parameters(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    token = await _setup_token(db)
    await refuse_inserts(db, "users")

    with trilha_serve(database_url, tmp_path) as (base, process):
        response = httpx.post(
            f"{base}/setup/{token}", data=_setup_form(), cookies={"trilha_csrf": CSRF}
        )
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=10)

    assert response.status_code == 500
    assert "INSERT INTO users" in output
    for secret in _secrets(token):
        assert secret not in output


async def test_a_constraint_violation_shows_none_of_the_row_it_quotes(
    database_url: str, db: AsyncEngine
) -> None:
    # PostgreSQL's DETAIL line quotes the key ("Key (email)=(...) already exists").
    row = {"id": "u1", "email": EMAIL, "password_hash": PASSWORD, "created_at": datetime.now(UTC)}
    async with db.begin() as arrange:
        await arrange.execute(insert(users), row)
    shown: list[BaseException] = []

    with pytest.raises(IntegrityError) as through_sqlalchemy:
        async with db.begin() as again:
            await again.execute(insert(users), {**row, "id": "u2"})
    shown.append(through_sqlalchemy.value)
    engine = make_engine(database_url)
    blocking = blocking_engine(engine)
    try:
        with blocking.connect() as conn, conn.begin():
            driver = conn.connection.driver_connection
            assert driver is not None
            with pytest.raises(IntegrityError) as on_the_driver_cursor:
                Cursor(conn, driver.cursor()).execute(
                    driver_sql(
                        "INSERT INTO users (id, email, password_hash, created_at) "
                        "VALUES ('u3', :email, :hash, :at)",
                        conn.dialect.paramstyle,
                    ),
                    {"email": EMAIL, "hash": PASSWORD, "at": "2026-01-01T00:00:00+00:00"},
                )
            shown.append(on_the_driver_cursor.value)
    finally:
        blocking.dispose()
        await engine.dispose()

    text = "".join("".join(traceback.format_exception(error)) for error in shown)
    assert text.count("INSERT INTO users") == 2
    assert EMAIL not in text
    assert PASSWORD not in text
