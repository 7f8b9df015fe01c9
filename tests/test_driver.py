"""The hot paths' cursor on the database driver (trilha.db.driver), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from trilha.db.driver import Cursor, driver_sql
from trilha.db.engine import blocking_engine, make_engine


async def test_a_statement_the_driver_cannot_send_closes_its_cursor(database_url: str) -> None:
    # A failed cursor left open was kept alive by its error's traceback; on SQLite it then held
    # the writer's connection back from its next write transaction until it was collected.
    engine = make_engine(database_url)
    blocking = blocking_engine(engine)
    try:
        with blocking.connect() as conn, conn.begin():
            driver = conn.connection.driver_connection
            assert driver is not None
            failed = driver.cursor()
            select = driver_sql("SELECT :value", conn.dialect.paramstyle)

            with pytest.raises(UnicodeEncodeError):  # no driver encodes a lone surrogate
                Cursor(conn, failed).execute(select, {"value": "\ud800"})

            with pytest.raises(conn.dialect.loaded_dbapi.Error):
                failed.execute(select, {"value": "closed"})
            fresh = Cursor(conn, driver.cursor())
            fresh.execute(select, {"value": "the transaction goes on"})
            assert fresh.fetchone() == ("the transaction goes on",)
    finally:
        blocking.dispose()
        await engine.dispose()
