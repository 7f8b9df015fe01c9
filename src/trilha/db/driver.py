"""SQL run straight on the driver's cursor: the write path's one fast path.

Every write of the redirect and the postback runs in the group-commit writer's thread as plain
functions over a ``sqlalchemy.Connection``. Most of their statements go through SQLAlchemy; the
rows written on every click and postback (the click batch, the conversion, its history row, the
log entry) and the lookups made for each go through here, on the driver's cursor in its own
parameter style, because SQLAlchemy's execution of a statement (finding the compiled form,
processing every parameter and row) cost about as much as the statement itself. Measured with
``insert_row`` against ``connection.execute(table.insert(), row)`` for a status-history row, in
one transaction, median of 3 rounds of 3000 rows: 27 against 42 µs a row on SQLite, 81 against
137 µs on PostgreSQL.

Lookups are written once with ``:name`` parameters; an inserted row's values go by position
(sqlite3 looks each named parameter up by its name). Values are converted by their column's
own SQLAlchemy type first, so a row is stored exactly as SQLAlchemy would store it. Under an
``AsyncConnection``'s ``run_sync`` (replays, test postbacks) the same functions run on
SQLAlchemy's adaptation of the async driver's cursor.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any, Protocol, cast

from sqlalchemy import JSON, Boolean, Connection, Dialect, Engine, Table, event
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DBAPIError

from trilha.db.bounds import max_lengths
from trilha.db.schema import EPOCH, ClickTime, UTCDateTime

_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")

Parameters = Mapping[str, Any] | Sequence[Any]


def without_detail(error: BaseException) -> None:
    """Keep only the first line of a PostgreSQL error's message: its DETAIL and CONTEXT lines
    quote the row's values ("Key (email)=(...) already exists"), which must not reach a log or
    a traceback any more than the statement's parameters (hidden on every engine). The fields
    stay readable in ``error.diag``.

    >>> error = ValueError('duplicate key\\nDETAIL:  Key (email)=(a@b.c) already exists.')
    >>> without_detail(error); error.args
    ('duplicate key',)
    """
    if error.args and isinstance(message := error.args[0], str) and "\n" in message:
        error.args = (message.partition("\n")[0], *error.args[1:])


@event.listens_for(Engine, "handle_error")
def _hide_detail(context: ExceptionContext) -> None:
    """Every engine's driver errors, and SQLAlchemy's message built from them."""
    without_detail(context.original_exception)
    if context.sqlalchemy_exception is not None:
        without_detail(context.sqlalchemy_exception)


class _DriverCursor(Protocol):
    """The part of a DB-API cursor (sqlite3's or psycopg's) the hot paths use."""

    def execute(self, sql: str, parameters: Parameters = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Parameters], /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def close(self) -> None: ...


class Cursor:
    """A driver cursor whose errors reach the caller as SQLAlchemy's, as they would through
    SQLAlchemy: wrapped in the matching DBAPIError subclass, and the connection invalidated
    (so that the next transaction opens a new one) when the error says it is gone."""

    def __init__(self, conn: Connection, cursor: _DriverCursor) -> None:
        self._conn = conn
        self._cursor = cursor

    def execute(self, sql: str, parameters: Parameters = ()) -> None:
        try:
            self._cursor.execute(sql, parameters)
        except Exception as error:
            self._failed(error, sql, parameters)
            raise

    def executemany(self, sql: str, parameters: Sequence[Parameters]) -> None:
        try:
            self._cursor.executemany(sql, parameters)
        except Exception as error:
            self._failed(error, sql, parameters)
            raise

    def fetchone(self) -> Any:
        return self._cursor.fetchone()

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    def copy_text(self, sql: str, data: str) -> None:
        """PostgreSQL: ``COPY ... FROM STDIN`` with ``data`` in COPY's text format."""
        try:
            with cast(Any, self._cursor).copy(sql) as copy:
                copy.write(data)
        except Exception as error:
            self._failed(error, sql, ())
            raise

    def _failed(self, error: Exception, sql: str, parameters: Any) -> None:
        """Close the cursor; raise a driver error as SQLAlchemy's (anything else, the caller
        raises as it is). Plain try/except in the callers rather than a context manager,
        which cost about 2.5 µs a statement (3.2 against 0.7 µs over the bare driver's
        ``SELECT 1``); a postback runs six."""
        dialect = self._conn.dialect
        base = dialect.loaded_dbapi.Error
        # Closed at once: the error's traceback keeps the cursor alive, and on SQLite a cursor
        # whose statement failed (a value the driver could not bind) kept the writer's
        # connection from its next write transaction until the garbage collector freed it,
        # past the busy timeout (seen as a 503 for the postbacks of later batches).
        with suppress(base):  # a connection already lost may refuse even that
            self._cursor.close()
        if not isinstance(error, base):
            return
        # Read whole, as SQLAlchemy reads it before its handle_error listeners run.
        gone = dialect.is_disconnect(error, self._conn.connection.dbapi_connection, None)
        if gone:
            self._conn.invalidate(error)
        without_detail(error)
        # Parameters hidden, as on every engine (db.engine, db.migrate): they hold tokens, password
        # hashes and e-mails, which must not reach a log or a traceback.
        raise DBAPIError.instance(
            sql,
            parameters,
            error,
            base,
            hide_parameters=True,
            connection_invalidated=gone,
            dialect=dialect,
        ) from error


@lru_cache(maxsize=256)
def driver_sql(sql: str, paramstyle: str) -> str:
    """``sql`` with its ``:name`` parameters in the driver's style (sqlite3 takes them as they
    are; psycopg wants ``%(name)s``).

    >>> driver_sql("SELECT :a, CAST(:b AS TEXT)", "pyformat")
    'SELECT %(a)s, CAST(%(b)s AS TEXT)'
    """
    if paramstyle in ("named", "qmark"):
        return sql
    return _NAMED.sub(r"%(\1)s", sql)


def driver_cursor(conn: Connection) -> Cursor:
    """A DB-API cursor on the connection under ``conn``, inside conn's transaction: the driver's
    own on the writer's blocking engine; SQLAlchemy's adaptation of the async driver's when
    ``conn`` is an AsyncConnection's, in ``run_sync``."""
    dbapi = conn.connection.dbapi_connection
    if dbapi is None:
        raise RuntimeError("the connection is closed")
    return Cursor(conn, cast(_DriverCursor, dbapi.cursor()))


def fetch_one(conn: Connection, sql: str, parameters: Mapping[str, Any]) -> Any:
    """The first row ``sql`` returns (a tuple of the driver's values), or None."""
    cursor = driver_cursor(conn)
    cursor.execute(driver_sql(sql, conn.dialect.paramstyle), parameters)
    return cursor.fetchone()


def insert_row(
    conn: Connection, table: Table, row: Mapping[str, Any], *, returning: str = ""
) -> Any:
    """INSERT ``row`` into ``table``, naming the columns it has, each value cut to its column's
    length. ``returning`` may add an ``ON CONFLICT`` clause and must then end in a
    ``RETURNING`` list, whose first row (or None) is returned."""
    dialect = conn.dialect
    processors = _preparers(table, dialect)
    # By position: sqlite3 binds a named parameter by looking its name up in the row, a third
    # of the cost of inserting a log entry's 25 columns.
    values = [
        value if value is None or (convert := processors[name]) is None else convert(value)
        for name, value in row.items()
    ]
    sql = _insert_sql(table, tuple(row), returning, _MARKERS[dialect.paramstyle])
    if returning:
        cursor = driver_cursor(conn)
        cursor.execute(sql, values)
        return cursor.fetchone()
    deferred: dict[str, list[list[Any]]] | None = conn.info.get(_DEFERRED)
    if deferred is not None:
        deferred.setdefault(sql, []).append(values)
        return None
    driver_cursor(conn).execute(sql, values)
    return None


# A positional parameter in each driver's style: sqlite3's and psycopg's.
_MARKERS = {"qmark": "?", "pyformat": "%s"}


_DEFERRED = "trilha.deferred_inserts"


@contextmanager
def deferred_inserts(conn: Connection) -> Iterator[None]:
    """Inside the block, ``insert_row`` keeps the rows it is given without ``returning`` and
    inserts them when the block ends: one ``executemany`` per table and column set, which on
    PostgreSQL sends them all in one round trip (psycopg's pipeline). Nothing inside the block
    may read them back; an insert that fails shows when the block ends."""
    deferred: dict[str, list[list[Any]]] = {}
    conn.info[_DEFERRED] = deferred
    try:
        yield
    finally:
        del conn.info[_DEFERRED]
    if deferred:
        cursor = driver_cursor(conn)
        for sql, rows in deferred.items():
            cursor.executemany(sql, rows)


@lru_cache(maxsize=32)
def _preparers(table: Table, dialect: Dialect) -> dict[str, Callable[[Any], Any] | None]:
    """bind_processors, with each bounded text column's value first cut to its length. None
    is bound as it is: every processor of the schema's types gives None for None."""
    limits = max_lengths(table)
    return {
        name: convert if name not in limits else _bounding(limits[name], convert)
        for name, convert in bind_processors(table, dialect).items()
    }


def _bounding(limit: int, convert: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    def bound(value: Any) -> Any:
        if isinstance(value, str):
            if type(value) is not str:  # an enum's member: its text, which sqlite3 binds as it
                value = str.__str__(value)  # is (a subclass it first tries to adapt, dearly)
            if len(value) > limit:
                value = value[:limit]
        return value if convert is None else convert(value)

    return bound


@lru_cache(maxsize=64)
def _insert_sql(table: Table, names: tuple[str, ...], suffix: str, marker: str) -> str:
    """The driver's own SQL: ``suffix`` must hold no parameter."""
    columns = ", ".join(names)
    markers = ", ".join(marker for _ in names)
    return f"INSERT INTO {table.name} ({columns}) VALUES ({markers}) {suffix}"  # noqa: S608 -- the schema's own names


@lru_cache(maxsize=32)
def bind_processors(table: Table, dialect: Dialect) -> dict[str, Callable[[Any], Any] | None]:
    """Each column's conversion of a Python value into what the driver is given (None: the
    value as it is)."""
    processors: dict[str, Callable[[Any], Any] | None] = {}
    for column in table.columns:
        if isinstance(column.type, JSON):
            processors[column.name] = _json  # text, which both databases take for JSON
        elif dialect.name == "sqlite" and type(column.type) is UTCDateTime:
            processors[column.name] = sqlite_time
        elif dialect.name == "sqlite" and type(column.type) is ClickTime:
            processors[column.name] = sqlite_click_time
        elif type(column.type) is Boolean and not dialect.supports_native_boolean:
            processors[column.name] = _integer_bool
        else:
            processors[column.name] = column.type.dialect_impl(dialect).bind_processor(dialect)
    return processors


def sqlite_time(value: datetime | None) -> str | None:
    """A time as SQLAlchemy stores a ``UTCDateTime`` on SQLite (its UTC time as text, always with
    microseconds), written straight: through the type's two processors it cost three times as
    much, and a postback writes four times.

    >>> from datetime import timedelta, timezone
    >>> sqlite_time(datetime(2026, 3, 1, 2, 30, tzinfo=timezone(timedelta(hours=-3))))
    '2026-03-01 05:30:00.000000'
    """
    if value is None:
        return None
    last = _LAST_TIME[0]
    if value is last[0]:  # a row's times, and its batch's, are most often one and the same
        return last[1]
    moment = value
    if moment.tzinfo is not UTC:
        if moment.tzinfo is None:
            raise ValueError("naive datetime: trilha stores times with their time zone")
        moment = moment.astimezone(UTC)
    text = moment.isoformat(" ", "microseconds")[:26]
    _LAST_TIME[0] = (value, text)  # one tuple, replaced whole: safe across threads
    return text


_LAST_TIME: list[tuple[datetime | None, str]] = [(None, "")]
_MICROSECOND = timedelta(microseconds=1)


def sqlite_click_time(value: datetime | None) -> int | None:
    """A click's time as ``ClickTime`` stores it on SQLite (microseconds since 1970), written
    straight rather than through the type's two processors: every click binds one.

    >>> sqlite_click_time(datetime(1970, 1, 1, 0, 0, 1, 5, tzinfo=UTC))
    1000005
    """
    if value is None:
        return None
    if value.tzinfo is None:
        raise ValueError("naive datetime: trilha stores times with their time zone")
    return (value - EPOCH) // _MICROSECOND


def _integer_bool(value: object) -> int | None:
    """A Boolean where the database has none (SQLite): 1 or 0, as SQLAlchemy binds it; what is
    no bool is left to SQLAlchemy's own conversion, which refuses what it cannot read."""
    if value is True:
        return 1
    if value is False:
        return 0
    return cast(int | None, _SQLALCHEMY_BOOL(value))


_SQLITE = sqlite.dialect()
_SQLALCHEMY_BOOL = cast(
    Callable[[Any], Any], Boolean().dialect_impl(_SQLITE).bind_processor(_SQLITE)
)


def _json(value: Any) -> str | None:
    if value is None:
        return None
    if value == {}:  # a click whose parameters all went into columns; most do
        return "{}"
    return json.dumps(value)
