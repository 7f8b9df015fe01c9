"""postbacks: merchants, event types, conversions, status history, postback log

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02 18:05:41.443566
"""

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "event_types",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("counts_as_conversion", sa.Boolean(), nullable=False),
        sa.Column("counts_as_revenue", sa.Boolean(), nullable=False),
        sa.Column("is_builtin", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_event_types_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_types")),
        sa.UniqueConstraint("workspace_id", "name", name=op.f("uq_event_types_workspace_id_name")),
    )
    op.create_table(
        "merchants",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("preset", sa.String(length=40), nullable=False),
        sa.Column("field_paths", sa.JSON(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("value_choice", sa.String(length=8), server_default="gross", nullable=False),
        sa.Column("value_unit", sa.String(length=8), nullable=True),
        sa.Column("ip_allowlist", sa.JSON(), nullable=False),
        sa.Column("secret", sa.Text(), nullable=True),
        sa.Column("dedupe_mode", sa.String(length=16), server_default="txid", nullable=False),
        sa.Column("dedupe_window_minutes", sa.Integer(), server_default="60", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "dedupe_mode IN ('txid', 'click', 'window', 'allow_repeats')",
            name=op.f("ck_merchants_dedupe_mode"),
        ),
        sa.CheckConstraint(
            "value_choice IN ('gross', 'net')", name=op.f("ck_merchants_value_choice")
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_merchants_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_merchants")),
        sa.UniqueConstraint("workspace_id", "key", name=op.f("uq_merchants_workspace_id_key")),
    )
    op.create_table(
        "conversions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column(
            "click_id",
            sa.String(length=26).with_variant(sa.String(length=26, collation="C"), "postgresql"),
            nullable=True,
        ),
        sa.Column("raw_click_id", sa.String(length=200), nullable=True),
        sa.Column("campaign_id", sa.String(length=32), nullable=True),
        sa.Column("source_id", sa.String(length=32), nullable=True),
        sa.Column("merchant_id", sa.String(length=32), nullable=True),
        sa.Column("event_type", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("value_minor", sa.Integer(), nullable=False),
        sa.Column("currency", sa.String(length=3), nullable=False),
        sa.Column("txid", sa.String(length=200), nullable=True),
        sa.Column("dedupe_key", sa.String(length=300), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status_changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attached_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('approved', 'pending', 'declined', 'refunded', 'chargeback')",
            name=op.f("ck_conversions_status"),
        ),
        sa.ForeignKeyConstraint(
            ["campaign_id"],
            ["campaigns.id"],
            name=op.f("fk_conversions_campaign_id_campaigns"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["click_id"],
            ["clicks.id"],
            name=op.f("fk_conversions_click_id_clicks"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["merchants.id"],
            name=op.f("fk_conversions_merchant_id_merchants"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["traffic_sources.id"],
            name=op.f("fk_conversions_source_id_traffic_sources"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_conversions_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversions")),
        sa.UniqueConstraint(
            "workspace_id", "dedupe_key", name=op.f("uq_conversions_workspace_id_dedupe_key")
        ),
    )
    with op.batch_alter_table("conversions", schema=None) as batch_op:
        batch_op.create_index("ix_conversions_click", ["click_id"], unique=False)
        batch_op.create_index(
            "ix_conversions_orphans", ["workspace_id", "raw_click_id"], unique=False
        )
        batch_op.create_index(
            "ix_conversions_workspace_time", ["workspace_id", "created_at"], unique=False
        )

    op.create_table(
        "postback_log",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=True),
        sa.Column("merchant_id", sa.String(length=32), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("method", sa.String(length=8), nullable=False),
        sa.Column("path", sa.String(length=200), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("body_truncated", sa.Boolean(), nullable=False),
        sa.Column("source_ip", sa.String(length=45), nullable=False),
        sa.Column("auth_failed", sa.Boolean(), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("conversion_id", sa.String(length=32), nullable=True),
        sa.Column("campaign_id", sa.String(length=32), nullable=True),
        sa.Column("click_id", sa.String(length=200), nullable=True),
        sa.Column("txid", sa.String(length=200), nullable=True),
        sa.Column("event_type", sa.String(length=40), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=True),
        sa.Column("value", sa.String(length=40), nullable=True),
        sa.Column("currency", sa.String(length=3), nullable=True),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("processing_us", sa.Integer(), nullable=False),
        sa.Column("replay_of", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["campaign_id"],
            ["campaigns.id"],
            name=op.f("fk_postback_log_campaign_id_campaigns"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["conversion_id"],
            ["conversions.id"],
            name=op.f("fk_postback_log_conversion_id_conversions"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["merchant_id"],
            ["merchants.id"],
            name=op.f("fk_postback_log_merchant_id_merchants"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_postback_log_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_postback_log")),
    )
    with op.batch_alter_table("postback_log", schema=None) as batch_op:
        batch_op.create_index("ix_postback_log_received", ["received_at"], unique=False)
        batch_op.create_index(
            "ix_postback_log_workspace_time", ["workspace_id", "received_at"], unique=False
        )

    op.create_table(
        "conversion_status_history",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("conversion_id", sa.String(length=32), nullable=False),
        sa.Column("from_status", sa.String(length=16), nullable=True),
        sa.Column("to_status", sa.String(length=16), nullable=False),
        sa.Column("postback_id", sa.String(length=32), nullable=True),
        sa.Column("actor", sa.String(length=80), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversion_id"],
            ["conversions.id"],
            name=op.f("fk_conversion_status_history_conversion_id_conversions"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["postback_id"],
            ["postback_log.id"],
            name=op.f("fk_conversion_status_history_postback_id_postback_log"),
            ondelete="SET NULL",
            initially="DEFERRED",
            deferrable=True,
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversion_status_history")),
    )
    with op.batch_alter_table("conversion_status_history", schema=None) as batch_op:
        batch_op.create_index(
            "ix_status_history_conversion", ["conversion_id", "created_at"], unique=False
        )

    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("merchant_id", sa.String(length=32), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_campaigns_merchant_id_merchants"),
            "merchants",
            ["merchant_id"],
            ["id"],
            ondelete="SET NULL",
        )
    _add_builtin_event_types()


# The event types every workspace starts with, as they were when this migration was written.
BUILTIN_EVENT_TYPES = (
    ("LEAD", True, False),
    ("SALE", True, True),
    ("UPSELL", True, True),
    ("REBILL", True, True),
    ("REGISTRATION", True, False),
    ("FTD", True, True),
    ("DEPOSIT", True, True),
)


def _add_builtin_event_types() -> None:
    bind = op.get_bind()
    table = sa.table(
        "event_types",
        *(
            sa.column(name)
            for name in (
                "id",
                "workspace_id",
                "name",
                "counts_as_conversion",
                "counts_as_revenue",
                "is_builtin",
                "created_at",
            )
        ),
    )
    now = datetime.now(UTC)
    rows = [
        {
            "id": secrets.token_hex(11),
            "workspace_id": workspace_id,
            "name": name,
            "counts_as_conversion": conversion,
            "counts_as_revenue": revenue,
            "is_builtin": True,
            "created_at": now,
        }
        for (workspace_id,) in bind.execute(sa.text("SELECT id FROM workspaces"))
        for name, conversion, revenue in BUILTIN_EVENT_TYPES
    ]
    if rows:
        op.bulk_insert(table, rows)


def downgrade() -> None:
    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_campaigns_merchant_id_merchants"), type_="foreignkey"
        )
        batch_op.drop_column("merchant_id")

    with op.batch_alter_table("conversion_status_history", schema=None) as batch_op:
        batch_op.drop_index("ix_status_history_conversion")

    op.drop_table("conversion_status_history")
    with op.batch_alter_table("postback_log", schema=None) as batch_op:
        batch_op.drop_index("ix_postback_log_workspace_time")
        batch_op.drop_index("ix_postback_log_received")

    op.drop_table("postback_log")
    with op.batch_alter_table("conversions", schema=None) as batch_op:
        batch_op.drop_index("ix_conversions_workspace_time")
        batch_op.drop_index("ix_conversions_orphans")
        batch_op.drop_index("ix_conversions_click")

    op.drop_table("conversions")
    op.drop_table("merchants")
    op.drop_table("event_types")
