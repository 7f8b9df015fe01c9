"""Click counts per UTC hour (and per UTC day, by sub1), kept in the transaction of the clicks
they sum.

A batch of clicks is added up in Python and each sum upserted once (``n = n + excluded.n``),
in key order, so that two writers upserting the same keys always lock them in the same order.
``rebuild_rollups`` recomputes every sum from the click rows (the migration's backfill, the
benchmark, ``trilha rollups rebuild``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Table, bindparam, delete, text

from trilha.db.driver import driver_cursor
from trilha.db.schema import click_hours, click_sub1_days, click_sub1_hours, clicks

COUNTS = ("clicks", "unique_clicks", "bot_clicks")


@dataclass(frozen=True, slots=True)
class Rollup:
    """A table of click counts keyed by workspace, a UTC hour or day, and ``dimensions``."""

    table: Table
    dimensions: tuple[str, ...]
    unit: str = "hour"  # the time column: "hour" or "day"

    @property
    def seconds(self) -> int:
        return HOUR if self.unit == "hour" else DAY

    @property
    def key(self) -> tuple[str, ...]:
        return ("workspace_id", self.unit, *self.dimensions)


HOUR, DAY = 3600, 86400
ROLLUPS = (
    Rollup(click_hours, ("campaign_id", "source_id")),
    Rollup(click_sub1_hours, ("campaign_id", "source_id", "sub1")),
    Rollup(click_sub1_days, ("campaign_id", "source_id", "sub1"), unit="day"),
)


def slot_of(moment: datetime, seconds: int) -> int:
    """Hours (or days) since 1970-01-01 UTC, the rollups' time key.

    >>> from datetime import UTC
    >>> slot_of(datetime(1970, 1, 2, 1, 59, tzinfo=UTC), HOUR)
    25
    """
    return int(moment.timestamp()) // seconds


def add_clicks(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Add a batch of click rows (as inserted) to every rollup, in conn's transaction."""
    cursor = driver_cursor(conn)
    paramstyle = conn.dialect.paramstyle
    finest = _finest_sums(rows)
    for rollup, project in _PROJECTIONS:
        sums = _project(finest, project)
        parameters = [(*key, *counts) for key, counts in sorted(sums.items())]
        sql = _upsert_sql(rollup)
        if paramstyle not in ("named", "qmark"):
            sql = sql.replace("?", "%s")
        cursor.executemany(sql, parameters)


# Every rollup's sums come from one pass over the rows: by workspace, UTC hour and every
# rollup's dimensions at once (a batch holds few such keys), each rollup's then added up from
# those. An hour's slot gives its day's: (seconds // HOUR) // 24 == seconds // DAY.
_FINEST = tuple(dict.fromkeys(name for rollup in ROLLUPS for name in rollup.dimensions))
_PROJECTIONS = tuple(
    (rollup, (rollup.seconds // HOUR, tuple(2 + _FINEST.index(n) for n in rollup.dimensions)))
    for rollup in ROLLUPS
)


def _finest_sums(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[Any, ...], list[int]]:
    """The rows' counts by workspace, UTC hour and the dimensions of every rollup."""
    sums: dict[tuple[Any, ...], list[int]] = {}
    for row in rows:
        key = (
            row["workspace_id"],
            slot_of(row["created_at"], HOUR),
            *[row.get(name) or "" for name in _FINEST],
        )
        counts = sums.get(key)
        if counts is None:
            counts = sums[key] = [0, 0, 0]
        counts[0] += 1
        if row["is_unique"]:
            counts[1] += 1
        if row["is_bot"]:
            counts[2] += 1
    return sums


def _project(
    finest: Mapping[tuple[Any, ...], list[int]], projection: tuple[int, tuple[int, ...]]
) -> dict[tuple[Any, ...], list[int]]:
    """The finest sums added up by one rollup's key: its slot (``hours`` to one), then its
    dimensions (their places in the finest key)."""
    hours, places = projection
    sums: dict[tuple[Any, ...], list[int]] = {}
    for fine, (n, unique, bots) in finest.items():
        key = (fine[0], fine[1] // hours, *[fine[place] for place in places])
        counts = sums.get(key)
        if counts is None:
            sums[key] = [n, unique, bots]
        else:
            counts[0] += n
            counts[1] += unique
            counts[2] += bots
    return sums


@lru_cache(maxsize=len(ROLLUPS))
def _upsert_sql(rollup: Rollup) -> str:
    name = rollup.table.name
    columns = (*rollup.key, *COUNTS)
    added = ", ".join(f"{c} = {name}.{c} + excluded.{c}" for c in COUNTS)
    return (
        f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"  # noqa: S608 -- the schema's own names
        f" ON CONFLICT ({', '.join(rollup.key)}) DO UPDATE SET {added}"
    )


def rename_sub1(conn: Connection, workspace_id: str, old: set[str], new: str) -> None:
    """Count the clicks the rollups keep under sub1 values ``old`` under ``new`` instead, as
    their click rows now say (a forgotten buyer's e-mail in a sub-id)."""
    if not old:
        return
    for rollup in ROLLUPS:
        if "sub1" not in rollup.dimensions:
            continue
        name = rollup.table.name
        key = ", ".join(k for k in rollup.key if k != "sub1")
        sums = ", ".join(f"SUM({c})" for c in COUNTS)
        added = ", ".join(f"{c} = {name}.{c} + excluded.{c}" for c in COUNTS)
        conn.execute(
            text(
                f"INSERT INTO {name} ({key}, sub1, {', '.join(COUNTS)})"  # noqa: S608 -- the schema's own names
                f" SELECT {key}, :new, {sums} FROM {name}"
                f" WHERE workspace_id = :workspace_id AND sub1 IN :old GROUP BY {key}"
                f" ON CONFLICT ({', '.join(rollup.key)}) DO UPDATE SET {added}"
            ).bindparams(bindparam("old", expanding=True)),
            {"workspace_id": workspace_id, "old": sorted(old), "new": new},
        )
        conn.execute(
            delete(rollup.table).where(
                rollup.table.c.workspace_id == workspace_id, rollup.table.c.sub1.in_(old)
            )
        )


def rebuild_rollups(
    conn: Connection, *, workspace_id: str | None = None, since: datetime | None = None
) -> None:
    """Recompute every rollup from the click rows (of one workspace, or all); ``since`` (a UTC
    midnight) leaves the sums of earlier days as they are, counting clicks purged since."""
    where = ["campaigns.workspace_id = :workspace_id"] if workspace_id else []
    where += ["clicks.created_at >= :since"] if since else []
    only = f"WHERE {' AND '.join(where)}" if where else ""
    for rollup in ROLLUPS:
        emptied = delete(rollup.table)
        if workspace_id:
            emptied = emptied.where(rollup.table.c.workspace_id == workspace_id)
        if since:
            emptied = emptied.where(rollup.table.c[rollup.unit] >= slot_of(since, rollup.seconds))
        conn.execute(emptied)
        dimensions = [f"COALESCE(clicks.{name}, '')" for name in rollup.dimensions]
        slot = _slot_sql(conn.dialect.name, rollup.seconds)
        grouped = ", ".join(["campaigns.workspace_id", slot, *dimensions])
        insert = text(
            f"INSERT INTO {rollup.table.name} ({', '.join((*rollup.key, *COUNTS))})"  # noqa: S608
            f" SELECT {grouped}, COUNT(*),"
            " SUM(CASE WHEN is_unique THEN 1 ELSE 0 END),"
            " SUM(CASE WHEN is_bot THEN 1 ELSE 0 END)"
            " FROM clicks JOIN campaigns ON campaigns.id = clicks.campaign_id"
            f" {only} GROUP BY {grouped}"
        )
        if since:  # stored as the column stores it (an integer on SQLite)
            insert = insert.bindparams(bindparam("since", type_=clicks.c.created_at.type))
        conn.execute(insert, {"workspace_id": workspace_id, "since": since})


def _slot_sql(dialect: str, seconds: int) -> str:
    if dialect == "postgresql":
        return f"CAST(FLOOR(EXTRACT(EPOCH FROM clicks.created_at) / {seconds}) AS INTEGER)"
    return f"clicks.created_at / {1_000_000 * seconds}"  # microseconds (ClickTime)
