"""SQL run straight on the database driver's cursor, for the hot write paths.

The click writer's batches and the postbacks of a SQLite batch run a handful of statements each;
SQLAlchemy's execution of each (looking up the compiled statement, processing every parameter
and row) cost as much as the statement itself. The SQL here is written once with ``:name``
parameters, as ``sqlalchemy.text`` takes it: on the writer's blocking connection it runs on the
driver's cursor, in the driver's own parameter style; on an async connection (PostgreSQL's
postbacks, replays, test postbacks) through ``text``. Values are converted by their column's
own SQLAlchemy type first, so a row is stored exactly as SQLAlchemy would store it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import suppress
from functools import lru_cache
from typing import Any, Protocol, TypeVar, cast

from sqlalchemy import (
    JSON,
    Connection,
    CursorResult,
    Dialect,
    Engine,
    Executable,
    Table,
    TextClause,
    event,
    text,
)
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.bounds import max_lengths

T = TypeVar("T")
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
    """A cursor on the driver connection under ``conn``, inside conn's transaction."""
    driver = conn.connection.driver_connection
    if driver is None:
        raise RuntimeError("the connection is closed")
    return Cursor(conn, driver.cursor())


class BlockingConnection:
    """The part of AsyncConnection the write paths use, over a blocking Connection: its awaits
    never suspend, so a coroutine on it runs to its end in one step (see run_blocking)."""

    def __init__(self, conn: Connection) -> None:
        self.sync = conn

    @property
    def dialect(self) -> Dialect:
        return self.sync.dialect

    async def execute(
        self,
        statement: Executable,
        parameters: Sequence[dict[str, Any]] | dict[str, Any] | None = None,
    ) -> CursorResult[Any]:
        return self.sync.execute(statement, parameters)


def as_async(conn: Connection) -> AsyncConnection:
    """A blocking connection, typed as the async one the domain functions take."""
    return cast(AsyncConnection, BlockingConnection(conn))


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends to its end, outside any event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coro.close()
    raise RuntimeError("a blocking write tried to suspend")


async def fetch_one(conn: AsyncConnection, sql: str, parameters: Mapping[str, Any]) -> Any:
    """The first row ``sql`` returns (a tuple of the driver's values), or None."""
    if isinstance(conn, BlockingConnection):
        cursor = driver_cursor(conn.sync)
        cursor.execute(driver_sql(sql, conn.dialect.paramstyle), parameters)
        return cursor.fetchone()
    row = (await conn.execute(_text(sql), dict(parameters))).first()
    return None if row is None else tuple(row)


async def execute(conn: AsyncConnection, sql: str, parameters: Mapping[str, Any]) -> None:
    """Run ``sql``, which returns no rows."""
    if isinstance(conn, BlockingConnection):
        driver_cursor(conn.sync).execute(driver_sql(sql, conn.dialect.paramstyle), parameters)
    else:
        await conn.execute(_text(sql), dict(parameters))


async def insert_row(
    conn: AsyncConnection, table: Table, row: Mapping[str, Any], *, returning: str = ""
) -> Any:
    """INSERT ``row`` into ``table``, naming the columns it has, each value cut to its column's
    length. ``returning`` may add an ``ON CONFLICT`` clause and must then end in a
    ``RETURNING`` list, whose first row (or None) is returned."""
    processors = _preparers(table, conn.dialect)
    values = {
        name: value if (convert := processors[name]) is None else convert(value)
        for name, value in row.items()
    }
    sql = _insert_sql(table, tuple(row), returning)
    if returning:
        return await fetch_one(conn, sql, values)
    await execute(conn, sql, values)
    return None


@lru_cache(maxsize=32)
def _preparers(table: Table, dialect: Dialect) -> dict[str, Callable[[Any], Any] | None]:
    """bind_processors, with each bounded text column's value first cut to its length."""
    limits = max_lengths(table)
    return {
        name: convert if name not in limits else _bounding(limits[name], convert)
        for name, convert in bind_processors(table, dialect).items()
    }


def _bounding(limit: int, convert: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    def bound(value: Any) -> Any:
        if isinstance(value, str) and len(value) > limit:
            value = value[:limit]
        return value if convert is None else convert(value)

    return bound


@lru_cache(maxsize=256)
def _text(sql: str) -> TextClause:
    """The statement for SQLAlchemy, parsed once: text() reads every parameter name anew."""
    return text(sql)


@lru_cache(maxsize=64)
def _insert_sql(table: Table, names: tuple[str, ...], suffix: str) -> str:
    columns = ", ".join(names)
    markers = ", ".join(f":{name}" for name in names)
    return f"INSERT INTO {table.name} ({columns}) VALUES ({markers}) {suffix}"  # noqa: S608 -- the schema's own names


@lru_cache(maxsize=32)
def bind_processors(table: Table, dialect: Dialect) -> dict[str, Callable[[Any], Any] | None]:
    """Each column's conversion of a Python value into what the driver is given (None: the
    value as it is)."""
    processors: dict[str, Callable[[Any], Any] | None] = {}
    for column in table.columns:
        if isinstance(column.type, JSON):
            processors[column.name] = _json  # text, which both databases take for JSON
        else:
            processors[column.name] = column.type.dialect_impl(dialect).bind_processor(dialect)
    return processors


def _json(value: Any) -> str | None:
    if value is None:
        return None
    if value == {}:  # a click whose parameters all went into columns; most do
        return "{}"
    return json.dumps(value)
