"""costs: campaigns' cost models (with history) and their costs and impressions per day

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TIME = sa.DateTime(timezone=True)


def _owned(table: str) -> list[sa.ForeignKeyConstraint]:
    return [
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f(f"fk_{table}_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["campaign_id"],
            ["campaigns.id"],
            name=op.f(f"fk_{table}_campaign_id_campaigns"),
            ondelete="CASCADE",
        ),
    ]


def upgrade() -> None:
    op.add_column("clicks", sa.Column("cost", sa.BigInteger(), nullable=True))
    op.create_table(
        "cost_models",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("campaign_id", sa.String(length=32), nullable=False),
        sa.Column("starts_on", sa.Date(), nullable=False),
        sa.Column("model", sa.String(length=16), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("rate", sa.BigInteger(), nullable=False),
        sa.Column("counts_bots", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("created_at", _TIME, nullable=False),
        sa.CheckConstraint(
            "model IN ('cpc', 'cpuc', 'cpm', 'cpa', 'revshare', 'click_url', 'manual')",
            name=op.f("ck_cost_models_model"),
        ),
        sa.CheckConstraint("rate >= 0", name=op.f("ck_cost_models_rate")),
        *_owned("cost_models"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cost_models")),
        sa.UniqueConstraint(
            "campaign_id", "starts_on", name=op.f("uq_cost_models_campaign_id_starts_on")
        ),
    )
    op.create_index("ix_cost_models_workspace", "cost_models", ["workspace_id"], unique=False)
    op.create_table(
        "cost_days",
        sa.Column("campaign_id", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("source_id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("cost", sa.BigInteger(), nullable=True),
        sa.Column("impressions", sa.BigInteger(), nullable=True),
        sa.Column("updated_at", _TIME, nullable=False),
        sa.CheckConstraint("cost >= 0 AND impressions >= 0", name=op.f("ck_cost_days_amounts")),
        *_owned("cost_days"),
        sa.PrimaryKeyConstraint("campaign_id", "day", "source_id", name=op.f("pk_cost_days")),
    )
    op.create_index(
        "ix_cost_days_workspace_day", "cost_days", ["workspace_id", "day"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_cost_days_workspace_day", table_name="cost_days")
    op.drop_table("cost_days")
    op.drop_index("ix_cost_models_workspace", table_name="cost_models")
    op.drop_table("cost_models")
    with op.batch_alter_table("clicks") as batch:
        batch.drop_column("cost")
