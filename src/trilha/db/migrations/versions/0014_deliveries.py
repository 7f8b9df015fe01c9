"""deliveries: destinations, the outbox of deliveries, their attempts, and notices

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 06:50:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "destinations",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("method", sa.String(length=8), server_default="GET", nullable=False),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("statuses", sa.JSON(), nullable=False),
        sa.Column("campaign_id", sa.String(length=32), nullable=True),
        sa.Column("source_id", sa.String(length=32), nullable=True),
        sa.Column("sub_id", sa.String(length=200), nullable=True),
        sa.Column("secret", sa.Text(), nullable=True),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="verifying", nullable=False),
        sa.Column("status_reason", sa.Text(), server_default="", nullable=False),
        sa.Column("consecutive_failures", sa.Integer(), server_default="0", nullable=False),
        sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "kind IN ('postback', 'webhook', 'meta_capi', 'google_ads', 'tiktok_events')",
            name=op.f("ck_destinations_kind"),
        ),
        sa.CheckConstraint("method IN ('GET', 'POST')", name=op.f("ck_destinations_method")),
        sa.CheckConstraint(
            "status IN ('verifying', 'active', 'inactive')", name=op.f("ck_destinations_status")
        ),
        sa.ForeignKeyConstraint(
            ["campaign_id"],
            ["campaigns.id"],
            name=op.f("fk_destinations_campaign_id_campaigns"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["traffic_sources.id"],
            name=op.f("fk_destinations_source_id_traffic_sources"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_destinations_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_destinations")),
    )
    op.create_index("ix_destinations_workspace", "destinations", ["workspace_id"], unique=False)
    op.create_table(
        "notices",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("destination_id", sa.String(length=32), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("emailed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["destination_id"],
            ["destinations.id"],
            name=op.f("fk_notices_destination_id_destinations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_notices_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notices")),
    )
    op.create_index(
        "ix_notices_workspace_time", "notices", ["workspace_id", "created_at"], unique=False
    )
    op.create_table(
        "deliveries",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("destination_id", sa.String(length=32), nullable=False),
        sa.Column("conversion_id", sa.String(length=32), nullable=False),
        sa.Column("conversion_status", sa.String(length=16), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), server_default="", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "state IN ('pending', 'sent', 'failed', 'skipped')", name=op.f("ck_deliveries_state")
        ),
        sa.ForeignKeyConstraint(
            ["conversion_id"],
            ["conversions.id"],
            name=op.f("fk_deliveries_conversion_id_conversions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["destination_id"],
            ["destinations.id"],
            name=op.f("fk_deliveries_destination_id_destinations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_deliveries_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deliveries")),
        sa.UniqueConstraint(
            "destination_id",
            "conversion_id",
            "conversion_status",
            name=op.f("uq_deliveries_destination_id_conversion_id_conversion_status"),
        ),
    )
    op.create_index("ix_deliveries_conversion", "deliveries", ["conversion_id"], unique=False)
    op.create_index("ix_deliveries_due", "deliveries", ["state", "next_attempt_at"], unique=False)
    op.create_index(
        "ix_deliveries_workspace_time", "deliveries", ["workspace_id", "created_at"], unique=False
    )
    op.create_table(
        "delivery_attempts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("delivery_id", sa.String(length=32), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("request", sa.Text(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["deliveries.id"],
            name=op.f("fk_delivery_attempts_delivery_id_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_delivery_attempts")),
    )
    op.create_index(
        "ix_delivery_attempts_delivery",
        "delivery_attempts",
        ["delivery_id", "started_at"],
        unique=False,
    )
    op.create_index(
        "ix_delivery_attempts_started", "delivery_attempts", ["started_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_delivery_attempts_started", table_name="delivery_attempts")
    op.drop_index("ix_delivery_attempts_delivery", table_name="delivery_attempts")
    op.drop_table("delivery_attempts")
    op.drop_index("ix_deliveries_workspace_time", table_name="deliveries")
    op.drop_index("ix_deliveries_due", table_name="deliveries")
    op.drop_index("ix_deliveries_conversion", table_name="deliveries")
    op.drop_table("deliveries")
    op.drop_index("ix_notices_workspace_time", table_name="notices")
    op.drop_table("notices")
    op.drop_index("ix_destinations_workspace", table_name="destinations")
    op.drop_table("destinations")
