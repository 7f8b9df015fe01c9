"""Tables in a partition a month on PostgreSQL (SQLite: one table each, and all of this does
nothing): ``clicks``, ``delivery_attempts`` and ``postback_log``.

Each is partitioned by RANGE (id): their ids begin with their millisecond
(:func:`trilha.ids.mint_click_id`, :func:`trilha.ids.new_id`) and compare in byte order (the
"C" collation), so the month from ``m`` to ``n`` holds the ids from ``click_ids_from(m)`` up to
``click_ids_from(n)``. The primary key stays ``id``, a lookup by id reads one partition,
``conversions.click_id`` still references ``clicks(id)`` and ``conversion_status_history.
postback_id`` ``postback_log(id)``.

- ``<table>_YYYY_MM``: a month's rows. :func:`ensure_partitions` creates the current month's
  and the next ``MONTHS_AHEAD`` months' before rows reach them.
- ``<table>_default``: any row no month's partition covers, so a click is never refused for
  want of a partition. It also keeps the rows retention must not drop (the converted clicks)
  of the months it dropped (:func:`drop_expired_months`): with no range covering them any
  more, they fall here. The postback log keeps none: the history's references to a dropped
  month's entries are emptied, as deleting the entries one by one would have done.

The few statements that change partitions run one at a time across processes (an advisory
lock) and give up after ``LOCK_TIMEOUT`` rather than queue clicks behind a long report.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from sqlalchemy import Connection, ForeignKeyConstraint, text
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.ids import click_ids_from

log = logging.getLogger(__name__)

MONTHS_AHEAD: Final = 2
# b"trilhapt" read as a big-endian integer, as for the migration lock.
PARTITION_LOCK_KEY: Final = 0x7472_696C_6861_7074
LOCK_TIMEOUT: Final = "5s"


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

    def bounds(self) -> tuple[str, str]:
        """The least id of the month's rows, and the least id of the next month's."""
        return click_ids_from(self.start), click_ids_from(self.next().start)


@dataclass(frozen=True)
class Reference:
    """A foreign key to the partitioned table, lifted for a moment while rows move."""

    name: str
    table: str
    column: str
    on_delete: str
    deferrable: bool = False  # checked at commit (DEFERRABLE INITIALLY DEFERRED)


@dataclass(frozen=True)
class Partitioned:
    table: str
    keep: str | None = None  # the rows kept when their month goes: an SQL condition on "t"
    reference: Reference | None = None

    @property
    def default(self) -> str:
        return f"{self.table}_default"

    def partition(self, month: Month) -> str:
        """
        >>> CLICKS.partition(Month(2027, 1))
        'clicks_2027_01'
        """
        return f"{self.table}_{month.year:04d}_{month.month:02d}"

    def month_of(self, name: str) -> Month | None:
        found = re.fullmatch(rf"{self.table}_(\d{{4}})_(\d{{2}})", name)
        return None if found is None else Month(int(found[1]), int(found[2]))


CLICKS: Final = Partitioned(
    "clicks",
    keep="EXISTS (SELECT FROM conversions WHERE conversions.click_id = t.id)",
    reference=Reference("fk_conversions_click_id_clicks", "conversions", "click_id", "SET NULL"),
)
ATTEMPTS: Final = Partitioned("delivery_attempts")
# Retention deletes log entries whether a history row points to them or not (ON DELETE SET
# NULL): a month goes whole, the history's references to it emptied (_release_references).
# An entry's id is minted after its request was received, so each entry of a month that ended
# by the retention's limit was received before it: none goes early.
POSTBACK_LOG: Final = Partitioned(
    "postback_log",
    reference=Reference(
        "fk_conversion_status_history_postback_id_postback_log",
        "conversion_status_history",
        "postback_id",
        "SET NULL",
        deferrable=True,
    ),
)
PARTITIONED: Final = (CLICKS, ATTEMPTS, POSTBACK_LOG)


def is_partition(name: str) -> bool:
    """Whether ``name`` is a partition, which db/schema.py does not list.

    >>> is_partition("clicks_2026_12"), is_partition("clicks_default"), is_partition("clicks")
    (True, True, False)
    """
    return any(name == t.default or t.month_of(name) is not None for t in PARTITIONED)


def is_partitioned(conn: Connection, table: Partitioned) -> bool:
    if conn.dialect.name != "postgresql":
        return False
    kind = conn.execute(
        text("SELECT relkind FROM pg_class WHERE oid = to_regclass(:name)"), {"name": table.table}
    ).scalar()
    return kind == "p"


def months(conn: Connection, table: Partitioned) -> list[Month]:
    """The months ``table`` has a partition for, oldest first."""
    names = conn.execute(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent = to_regclass(:parent)"
        ),
        {"parent": table.table},
    ).scalars()
    return sorted(m for m in map(table.month_of, names) if m is not None)


def ensure_partitions(conn: Connection, *, now: datetime, ahead: int = MONTHS_AHEAD) -> list[str]:
    """Create the partitions of the current month and of ``ahead`` months after it that are
    missing; the names created. Rows of such a month already in the default partition move in."""
    wanted, month = [], Month.of(now)
    for _ in range(ahead + 1):
        wanted.append(month)
        month = month.next()
    created = []
    for table in PARTITIONED:
        if not is_partitioned(conn, table):
            continue
        if not set(wanted) - set(months(conn, table)):
            continue
        _lock(conn)
        have = set(months(conn, table))  # another process may have made them while this waited
        for month in wanted:
            if month not in have:
                _create(conn, table, month)
                created.append(table.partition(month))
    return created


def create_partition(conn: Connection, table: Partitioned, month: Month) -> None:
    """The partition of ``month`` (for the migrations, which hold their own lock)."""
    lower, upper = month.bounds()
    conn.exec_driver_sql(
        f"CREATE TABLE {table.partition(month)} PARTITION OF {table.table}"
        f" FOR VALUES FROM ('{lower}') TO ('{upper}')"  # base62 characters only: no quoting
    )


def create_default(conn: Connection, table: Partitioned) -> None:
    conn.exec_driver_sql(f"CREATE TABLE {table.default} PARTITION OF {table.table} DEFAULT")


def _create(conn: Connection, table: Partitioned, month: Month) -> None:
    lower, upper = month.bounds()
    stray = f"SELECT EXISTS (SELECT FROM {table.default} WHERE id >= :lower AND id < :upper)"  # noqa: S608 -- our names
    strays = conn.execute(text(stray), {"lower": lower, "upper": upper}).scalar()
    if not strays:
        create_partition(conn, table, month)
        return
    # PostgreSQL refuses a partition for rows the default partition holds: they move into a
    # table of their own first, which then becomes the month's partition.
    name = table.partition(month)
    with _references_lifted(conn, table):
        conn.exec_driver_sql(
            f"CREATE TABLE {name} (LIKE {table.table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        )
        where = f"id >= '{lower}' AND id < '{upper}'"
        move = f"INSERT INTO {name} SELECT * FROM {table.default} WHERE {where}"  # noqa: S608 -- our names
        conn.exec_driver_sql(move)
        conn.exec_driver_sql(f"DELETE FROM {table.default} WHERE {where}")  # noqa: S608 -- our names
        conn.exec_driver_sql(
            f"ALTER TABLE {table.table} ATTACH PARTITION {name}"
            f" FOR VALUES FROM ('{lower}') TO ('{upper}')"
        )


def drop_expired_months(conn: Connection, table: Partitioned, *, older_than: datetime) -> list[str]:
    """Drop the partition of each month that ended by ``older_than``, keeping the rows
    ``table.keep`` names (in the default partition); the names dropped. At most one month a
    call, so that each month is a transaction of its own.

    A table that keeps none of a month's rows but is referenced (the postback log) has the
    references to them emptied, as its ``ON DELETE SET NULL`` would have done row by row."""
    if not is_partitioned(conn, table):
        return []
    expired = [m for m in months(conn, table) if m.next().start <= older_than]
    if not expired:
        return []
    _lock(conn)
    month = expired[0]
    if month not in months(conn, table):
        return []  # another process dropped it while this one waited
    name = table.partition(month)
    # Most references go before the tables are locked, while postbacks still come in; the
    # second pass, locked, finds the few written meanwhile through the index.
    _release_references(conn, table, month)
    with _references_lifted(conn, table):
        _release_references(conn, table, month)
        conn.exec_driver_sql(f"ALTER TABLE {table.table} DETACH PARTITION {name}")
        if table.keep is not None:
            keep = f"INSERT INTO {table.table} SELECT * FROM {name} AS t WHERE {table.keep}"  # noqa: S608 -- our names
            conn.exec_driver_sql(keep)
        conn.exec_driver_sql(f"DROP TABLE {name}")
    return [name]


async def drop_expired_partitions(
    engine: AsyncEngine, table: Partitioned, *, older_than: datetime
) -> list[str]:
    """On PostgreSQL, each month of ``table`` past retention in a transaction of its own, then
    a lifted reference checked again in another (each time: a check that failed is tried again
    the next time); the partitions dropped. The caller's row-level purge deletes the rest, in
    the month still partly kept."""
    if engine.dialect.name != "postgresql":
        return []
    dropped: list[str] = []
    while True:
        async with engine.begin() as conn:
            names = await conn.run_sync(drop_expired_months, table, older_than=older_than)
        if not names:
            break
        log.info("dropped partition %s, past retention", *names)
        dropped += names
    if table.reference is not None:
        async with engine.begin() as conn:
            await conn.run_sync(validate_references)
    return dropped


def _release_references(conn: Connection, table: Partitioned, month: Month) -> None:
    """Empty the references to ``month``'s rows, when ``table`` keeps none of them (the
    reference's ON DELETE being SET NULL)."""
    ref = table.reference
    if ref is None or table.keep is not None:
        return
    lower, upper = month.bounds()
    # The referencing column compares in byte order too: its index finds the month's range.
    conn.execute(
        text(
            f"UPDATE {ref.table} SET {ref.column} = NULL"  # noqa: S608 -- our names
            f" WHERE {ref.column} >= :lower AND {ref.column} < :upper"
        ),
        {"lower": lower, "upper": upper},
    )


def validate_references(conn: Connection) -> None:
    """Check the references lifted by a drop, without blocking writes (a lighter lock)."""
    for table in PARTITIONED:
        if table.reference is None or not is_partitioned(conn, table):
            continue
        unchecked = conn.execute(
            text("SELECT NOT convalidated FROM pg_constraint WHERE conname = :name"),
            {"name": table.reference.name},
        ).scalar()
        if unchecked:
            conn.exec_driver_sql(
                f"ALTER TABLE {table.reference.table} VALIDATE CONSTRAINT {table.reference.name}"
            )


@contextmanager
def _references_lifted(conn: Connection, table: Partitioned) -> Iterator[None]:
    """Without the reference to ``table`` for the statements inside, in the transaction.

    PostgreSQL refuses to detach a partition holding clicks a conversion points to, and
    deleting them from it would empty the conversions' click_id (ON DELETE SET NULL). Within
    the transaction, with the table locked, the statements inside keep every such row (or,
    for the postback log, empty every reference to the rows that go); the reference comes
    back NOT VALID (no scan of conversions while clicks is locked), and
    :func:`validate_references` checks it afterwards."""
    ref = table.reference
    if ref is None:
        yield
        return
    conn.exec_driver_sql(f"ALTER TABLE {ref.table} DROP CONSTRAINT {ref.name}")
    yield
    conn.exec_driver_sql(
        f"ALTER TABLE {ref.table} ADD CONSTRAINT {ref.name} FOREIGN KEY ({ref.column})"
        f" REFERENCES {table.table} (id) ON DELETE {ref.on_delete}"
        + (" DEFERRABLE INITIALLY DEFERRED" if ref.deferrable else "")
        + " NOT VALID"
    )


def _lock(conn: Connection) -> None:
    conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PARTITION_LOCK_KEY})


def not_a_partition(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Alembic's ``include_object``: schema comparisons skip the partitions, and the copies of
    references to a partitioned table PostgreSQL keeps for each of them."""
    if type_ == "table":
        return name is None or not is_partition(name)
    if type_ == "foreign_key_constraint" and isinstance(obj, ForeignKeyConstraint):
        return not is_partition(obj.referred_table.name)
    return True
