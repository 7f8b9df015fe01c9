"""click counts per hour (and per day by sub1), for reports

Reports over a month of clicks read hourly sums instead of every click; the sums are filled from
the clicks already stored and from then on kept in the transaction of each batch of clicks.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 21:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTS = ("clicks", "unique_clicks", "bot_clicks")
# (table, its time column, seconds in one, its dimensions): the rollups as this migration made
# them, summed from the clicks as they were then (each with its workspace id, its time as text on
# SQLite). Written out here: a migration keeps doing what it did when it was written.
ROLLUPS = (
    ("click_hours", "hour", 3600, ("campaign_id", "source_id")),
    ("click_sub1_hours", "hour", 3600, ("campaign_id", "source_id", "sub1")),
    ("click_sub1_days", "day", 86400, ("campaign_id", "source_id", "sub1")),
)


def _create(name: str, dimensions: Sequence[sa.Column[str]], unit: str = "hour") -> None:
    op.create_table(
        name,
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column(unit, sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("campaign_id", sa.String(length=32), nullable=False),
        *dimensions,
        *(sa.Column(count, sa.Integer(), nullable=False) for count in COUNTS),
        sa.ForeignKeyConstraint(
            ["campaign_id"],
            ["campaigns.id"],
            name=op.f(f"fk_{name}_campaign_id_campaigns"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f(f"fk_{name}_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "workspace_id",
            unit,
            "campaign_id",
            *(c.name for c in dimensions),
            name=op.f(f"pk_{name}"),
        ),
    )


def upgrade() -> None:
    _create("click_hours", [sa.Column("source_id", sa.String(length=32), nullable=False)])
    for name, unit in (("click_sub1_hours", "hour"), ("click_sub1_days", "day")):
        _create(
            name,
            [
                sa.Column("source_id", sa.String(length=32), nullable=False),
                sa.Column("sub1", sa.Text(), nullable=False),
            ],
            unit,
        )
    postgres = op.get_bind().dialect.name == "postgresql"
    for name, unit, seconds, dimensions in ROLLUPS:
        if postgres:
            slot = f"CAST(FLOOR(EXTRACT(EPOCH FROM created_at) / {seconds}) AS INTEGER)"
        else:
            slot = f"CAST(strftime('%s', created_at) AS INTEGER) / {seconds}"
        grouped = ", ".join(["workspace_id", slot, *(f"COALESCE({d}, '')" for d in dimensions)])
        op.execute(
            f"INSERT INTO {name} (workspace_id, {unit}, {', '.join(dimensions)},"  # noqa: S608 -- constants
            f" {', '.join(COUNTS)}) SELECT {grouped}, COUNT(*),"
            " SUM(CASE WHEN is_unique THEN 1 ELSE 0 END), SUM(CASE WHEN is_bot THEN 1 ELSE 0 END)"
            f" FROM clicks GROUP BY {grouped}"
        )


def downgrade() -> None:
    op.drop_table("click_sub1_days")
    op.drop_table("click_sub1_hours")
    op.drop_table("click_hours")
