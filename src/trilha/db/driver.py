"""SQL run straight on the database driver's cursor, for the hot write paths.

The click writer's batches run a handful of statements for dozens of clicks; SQLAlchemy's
execution of each (compiling or looking up the statement, processing every parameter and row)
cost as much as the statement itself. Here the SQL is written once with ``:name`` parameters, as
``sqlalchemy.text`` takes it, and turned into the driver's own parameter style.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, Protocol

from sqlalchemy import Connection

_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")

Parameters = Mapping[str, Any] | Sequence[Any]


class DriverCursor(Protocol):
    """The part of a DB-API cursor (sqlite3's or psycopg's) the hot paths use."""

    def execute(self, sql: str, parameters: Parameters = ..., /) -> Any: ...

    def executemany(self, sql: str, parameters: Iterable[Parameters], /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


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


def driver_cursor(conn: Connection) -> DriverCursor:
    """A cursor on the driver connection under ``conn``, inside conn's transaction."""
    driver = conn.connection.driver_connection
    if driver is None:
        raise RuntimeError("the connection is closed")
    cursor: DriverCursor = driver.cursor()
    return cursor
