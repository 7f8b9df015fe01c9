"""Clicks in a partition a month on PostgreSQL (SQLite: one table, and all of this does nothing).

``clicks`` is partitioned by RANGE (id): click ids begin with their millisecond
(:func:`trilha.ids.mint_click_id`), so the month from ``m`` to ``n`` holds the ids from
``click_ids_from(m)`` up to ``click_ids_from(n)``. The primary key stays ``id``, a lookup by
click id reads one partition, and ``conversions.click_id`` still references ``clicks(id)``.

- ``clicks_YYYY_MM``: a month's clicks. :func:`ensure_partitions` creates the current month's
  and the next ``MONTHS_AHEAD`` months' before clicks reach them.
- ``clicks_default``: any click no month's partition covers, so a click is never refused for
  want of a partition. It also keeps the converted clicks of months retention dropped
  (:func:`drop_expired_months`): with no range covering them any more, they fall here.

The few statements that change partitions run one at a time across processes (an advisory
lock) and give up after ``LOCK_TIMEOUT`` rather than queue clicks behind a long report.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import Connection, ForeignKeyConstraint, text

from trilha.ids import click_ids_from

PARENT: Final = "clicks"
DEFAULT: Final = "clicks_default"
MONTHS_AHEAD: Final = 2
# b"trilhapt" read as a big-endian integer, as for the migration lock.
PARTITION_LOCK_KEY: Final = 0x7472_696C_6861_7074
LOCK_TIMEOUT: Final = "5s"
# The reference to clicks a month's detaching must lift for a moment (see _references_lifted).
CLICK_REFERENCE: Final = "fk_conversions_click_id_clicks"

_MONTH_NAME = re.compile(r"clicks_(\d{4})_(\d{2})")


@dataclass(frozen=True, order=True)
class Month:
    year: int
    month: int

    @classmethod
    def of(cls, at: datetime) -> Month:
        at = at.astimezone(UTC)
        return cls(at.year, at.month)

    @property
    def start(self) -> datetime:
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    def next(self) -> Month:
        return Month(self.year + self.month // 12, self.month % 12 + 1)

    @property
    def name(self) -> str:
        """
        >>> Month(2027, 1).name
        'clicks_2027_01'
        """
        return f"{PARENT}_{self.year:04d}_{self.month:02d}"

    def bounds(self) -> tuple[str, str]:
        """The least id of the month's clicks, and the least id of the next month's."""
        return click_ids_from(self.start), click_ids_from(self.next().start)


def is_partition(name: str) -> bool:
    """Whether ``name`` is one of clicks' partitions, which db/schema.py does not list.

    >>> is_partition("clicks_2026_12"), is_partition("clicks_default"), is_partition("clicks")
    (True, True, False)
    """
    return name == DEFAULT or _MONTH_NAME.fullmatch(name) is not None


def is_partitioned(conn: Connection) -> bool:
    if conn.dialect.name != "postgresql":
        return False
    kind = conn.execute(
        text("SELECT relkind FROM pg_class WHERE oid = to_regclass(:name)"), {"name": PARENT}
    ).scalar()
    return kind == "p"


def months(conn: Connection) -> list[Month]:
    """The months clicks has a partition for, oldest first."""
    names = conn.execute(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = to_regclass(:parent)"
        ),
        {"parent": PARENT},
    ).scalars()
    found = [_MONTH_NAME.fullmatch(name) for name in names]
    return sorted(Month(int(m[1]), int(m[2])) for m in found if m is not None)


def ensure_partitions(conn: Connection, *, now: datetime, ahead: int = MONTHS_AHEAD) -> list[str]:
    """Create the partitions of the current month and of ``ahead`` months after it that are
    missing; the names created. Clicks of such a month already in ``clicks_default`` move in."""
    if not is_partitioned(conn):
        return []
    wanted, month = [], Month.of(now)
    for _ in range(ahead + 1):
        wanted.append(month)
        month = month.next()
    missing = [m for m in wanted if m not in set(months(conn))]
    if not missing:
        return []
    _lock(conn)
    have = set(months(conn))  # another process may have created them while this one waited
    created = []
    for month in missing:
        if month not in have:
            _create(conn, month)
            created.append(month.name)
    return created


def create_partition(conn: Connection, month: Month) -> None:
    """The partition of ``month`` (for the migration, which holds its own lock)."""
    lower, upper = month.bounds()
    conn.exec_driver_sql(
        f"CREATE TABLE {month.name} PARTITION OF {PARENT}"
        f" FOR VALUES FROM ('{lower}') TO ('{upper}')"  # base62 characters only: no quoting
    )


def create_default(conn: Connection) -> None:
    conn.exec_driver_sql(f"CREATE TABLE {DEFAULT} PARTITION OF {PARENT} DEFAULT")


def _create(conn: Connection, month: Month) -> None:
    lower, upper = month.bounds()
    stray = f"SELECT EXISTS (SELECT FROM {DEFAULT} WHERE id >= :lower AND id < :upper)"  # noqa: S608 -- our names
    strays = conn.execute(text(stray), {"lower": lower, "upper": upper}).scalar()
    if not strays:
        create_partition(conn, month)
        return
    # PostgreSQL refuses a partition for rows the default partition holds: they move into a
    # table of their own first, which then becomes the month's partition.
    with _references_lifted(conn):
        conn.exec_driver_sql(
            f"CREATE TABLE {month.name} (LIKE {PARENT} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        )
        where = f"id >= '{lower}' AND id < '{upper}'"
        move = f"INSERT INTO {month.name} SELECT * FROM {DEFAULT} WHERE {where}"  # noqa: S608 -- our names
        conn.exec_driver_sql(move)
        conn.exec_driver_sql(f"DELETE FROM {DEFAULT} WHERE {where}")  # noqa: S608 -- our names
        conn.exec_driver_sql(
            f"ALTER TABLE {PARENT} ATTACH PARTITION {month.name}"
            f" FOR VALUES FROM ('{lower}') TO ('{upper}')"
        )


def drop_expired_months(conn: Connection, *, older_than: datetime) -> list[str]:
    """Drop the partition of each month that ended by ``older_than``, keeping the clicks
    conversions point to (in ``clicks_default``); the names dropped. At most one month a call,
    so that each month is a transaction of its own."""
    if not is_partitioned(conn):
        return []
    expired = [m for m in months(conn) if m.next().start <= older_than]
    if not expired:
        return []
    _lock(conn)
    month = expired[0]
    if month not in months(conn):
        return []  # another process dropped it while this one waited
    with _references_lifted(conn):
        conn.exec_driver_sql(f"ALTER TABLE {PARENT} DETACH PARTITION {month.name}")
        converted = "EXISTS (SELECT FROM conversions WHERE conversions.click_id = c.id)"
        keep = f"INSERT INTO {PARENT} SELECT * FROM {month.name} AS c WHERE {converted}"  # noqa: S608 -- our names
        conn.exec_driver_sql(keep)
        conn.exec_driver_sql(f"DROP TABLE {month.name}")
    return [month.name]


def validate_references(conn: Connection) -> None:
    """Check the reference lifted by a drop, without blocking clicks (a lighter lock)."""
    if not is_partitioned(conn):
        return
    unchecked = conn.execute(
        text("SELECT NOT convalidated FROM pg_constraint WHERE conname = :name"),
        {"name": CLICK_REFERENCE},
    ).scalar()
    if unchecked:
        conn.exec_driver_sql(f"ALTER TABLE conversions VALIDATE CONSTRAINT {CLICK_REFERENCE}")


@contextmanager
def _references_lifted(conn: Connection) -> Iterator[None]:
    """Without conversions' reference to clicks for the statements inside, in the transaction.

    PostgreSQL refuses to detach a partition holding clicks a conversion points to, and
    deleting them from it would empty the conversions' click_id (ON DELETE SET NULL). Within
    the transaction, with clicks locked, the statements inside keep every such click; the
    reference comes back NOT VALID (no scan of conversions while clicks is locked), and
    :func:`validate_references` checks it afterwards."""
    conn.exec_driver_sql(f"ALTER TABLE conversions DROP CONSTRAINT {CLICK_REFERENCE}")
    yield
    conn.exec_driver_sql(
        f"ALTER TABLE conversions ADD CONSTRAINT {CLICK_REFERENCE} FOREIGN KEY (click_id)"
        f" REFERENCES {PARENT} (id) ON DELETE SET NULL NOT VALID"
    )


def _lock(conn: Connection) -> None:
    conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PARTITION_LOCK_KEY})


def not_a_partition(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Alembic's ``include_object``: schema comparisons skip clicks' partitions, and the copies
    of conversions' reference to clicks PostgreSQL keeps for each of them."""
    if type_ == "table":
        return name is None or not is_partition(name)
    if type_ == "foreign_key_constraint" and isinstance(obj, ForeignKeyConstraint):
        return not is_partition(obj.referred_table.name)
    return True
