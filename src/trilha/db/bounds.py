"""The most characters each ``String(n)`` column holds, read from the schema itself, so that
each limit is written in one place.

PostgreSQL refuses a longer value, and with it the statement and the transaction it ran in (a
whole click batch, a postback's savepoint); SQLite would store it whole. Values that come from
outside are therefore bounded before they are written.
"""

from __future__ import annotations

from functools import lru_cache

from sqlalchemy import String, Table


@lru_cache(maxsize=32)
def max_lengths(table: Table) -> dict[str, int]:
    """The length of each bounded text column of ``table``.

    >>> from trilha.db.schema import clicks
    >>> max_lengths(clicks)["browser"], "user_agent" in max_lengths(clicks)
    (64, False)
    """
    return {
        column.name: column.type.length
        for column in table.columns
        if isinstance(column.type, String) and column.type.length is not None
    }


def bounded(value: str, limit: int) -> str:
    """``value`` cut to ``limit`` characters (sliced only when it is longer).

    >>> bounded("Mobile Safari", 6), bounded("iOS", 6)
    ('Mobile', 'iOS')
    """
    return value[:limit] if len(value) > limit else value
