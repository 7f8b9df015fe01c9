"""The hot paths' cursor on the database driver (trilha.db.driver), on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Boolean, create_engine
from sqlalchemy.dialects import sqlite

from trilha.db.driver import Cursor, bind_processors, driver_sql, sqlite_click_time, sqlite_time
from trilha.db.engine import blocking_engine, make_engine
from trilha.db.schema import ClickTime, UTCDateTime, clicks, conversions, metadata


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


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 12, 7, 14, 5, 9, 123456, tzinfo=UTC),
        datetime(2026, 12, 7, 14, 5, 9, tzinfo=UTC),  # no microseconds: still written
        datetime(2026, 3, 1, 23, 30, 1, 5, tzinfo=timezone(timedelta(hours=-3))),  # next day
        datetime(5, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 6, 1, 12, 0, tzinfo=ZoneInfo("America/Sao_Paulo")),
    ],
)
def test_a_time_is_written_on_sqlite_as_sqlalchemy_writes_it(moment: datetime) -> None:
    # The hot paths' writer formats UTCDateTime values itself: the text must be SQLAlchemy's,
    # or the same time would compare and sort differently in the rows each wrote.
    dialect = sqlite.dialect()
    theirs = UTCDateTime().dialect_impl(dialect).bind_processor(dialect)
    assert theirs is not None
    assert bind_processors(conversions, dialect)["created_at"] is sqlite_time
    assert sqlite_time(moment) == theirs(moment)
    assert sqlite_time(None) is None


def test_a_naive_time_is_refused_by_the_sqlite_writer() -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        sqlite_time(datetime(2026, 12, 7, 14, 5))  # noqa: DTZ001 -- the naive time refused
    with pytest.raises(ValueError, match="naive datetime"):
        sqlite_click_time(datetime(2026, 12, 7, 14, 5))  # noqa: DTZ001 -- the same


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 12, 7, 14, 5, 9, 123456, tzinfo=UTC),
        datetime(2026, 3, 1, 23, 30, 1, 5, tzinfo=timezone(timedelta(hours=-3))),
        datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),  # before 1970: negative
        datetime(5, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 11, 1, 0, 30, fold=1, tzinfo=ZoneInfo("America/Sao_Paulo")),
    ],
)
def test_a_click_time_is_written_on_sqlite_as_its_type_writes_it(moment: datetime) -> None:
    # The click writer converts a click's time itself: the integer must be ClickTime's own.
    dialect = sqlite.dialect()
    theirs = ClickTime().dialect_impl(dialect).bind_processor(dialect)
    assert theirs is not None
    assert bind_processors(clicks, dialect)["created_at"] is sqlite_click_time
    assert sqlite_click_time(moment) == theirs(moment)
    assert sqlite_click_time(None) is None


@pytest.mark.parametrize("value", [True, False, None, 1, 0, "yes", 2])
def test_a_boolean_is_bound_on_sqlite_as_sqlalchemy_binds_it(value: object) -> None:
    dialect = sqlite.dialect()
    theirs = Boolean().dialect_impl(dialect).bind_processor(dialect)
    ours = bind_processors(clicks, dialect)["is_bot"]
    assert theirs is not None
    assert ours is not None
    try:
        expected: object = theirs(value)
    except (TypeError, ValueError) as refused:
        with pytest.raises(type(refused), match=re.escape(str(refused))):
            ours(value)
    else:
        assert ours(value) == expected
        assert type(ours(value)) is type(expected)


@pytest.mark.parametrize("url", ["sqlite://", "postgresql+psycopg://"])
def test_every_column_binds_none_as_null(url: str) -> None:
    # insert_row binds a None as it is, without its column's processor: that holds only while
    # every processor of the schema's types gives None for None.
    dialect = create_engine(url).dialect
    for table in metadata.sorted_tables:
        for name, convert in bind_processors(table, dialect).items():
            assert convert is None or convert(None) is None, f"{table.name}.{name}"
