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

from trilha.reports.rollups import rebuild_rollups

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTS = ("clicks", "unique_clicks", "bot_clicks")


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
    rebuild_rollups(op.get_bind())


def downgrade() -> None:
    op.drop_table("click_sub1_days")
    op.drop_table("click_sub1_hours")
    op.drop_table("click_hours")
