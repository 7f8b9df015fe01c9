"""The metrics a member shows in reports: chosen once, remembered per workspace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import memberships
from trilha.errors import InvalidInput
from trilha.reports.metrics import METRIC_NAMES

DEFAULT_COLUMNS: Final = (
    "clicks",
    "unique_clicks",
    "sales",
    "pending_sales",
    "approved_revenue",
    "refunds",
    "net_revenue",
    "cost",
    "profit",
    "roi",
    "cr",
    "epc",
)


def checked_columns(names: Sequence[str]) -> tuple[str, ...]:
    """Metric names in the order given, each once; InvalidInput for one that is not a metric.

    >>> checked_columns(["sales", "clicks", "sales"])
    ('sales', 'clicks')
    """
    unknown = [name for name in names if name not in METRIC_NAMES]
    if unknown:
        raise InvalidInput({"columns": f"not a metric: {', '.join(unknown[:5])}"})
    if not names:
        raise InvalidInput({"columns": "choose at least one metric"})
    return tuple(dict.fromkeys(names))


async def report_columns(conn: AsyncConnection, workspace_id: str, user_id: str) -> tuple[str, ...]:
    """The member's chosen metrics (those that still exist), else the default ones."""
    m = memberships.c
    chosen = await conn.scalar(
        select(m.report_columns).where(m.workspace_id == workspace_id, m.user_id == user_id)
    )
    kept = tuple(name for name in chosen or () if name in METRIC_NAMES)
    return kept or DEFAULT_COLUMNS


async def save_report_columns(
    conn: AsyncConnection, workspace_id: str, user_id: str, names: Sequence[str]
) -> tuple[str, ...]:
    columns = checked_columns(names)
    m = memberships.c
    await conn.execute(
        update(memberships)
        .where(m.workspace_id == workspace_id, m.user_id == user_id)
        .values(report_columns=list(columns))
    )
    return columns
