"""initial schema: accounts, workspaces, campaigns, clicks

Revision ID: 0001
Revises:
Create Date: 2026-12-02 17:52:36.789631
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "instance",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_instance")),
    )
    op.create_table(
        "setup_tokens",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_setup_tokens")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("name", sa.String(length=120), server_default="", nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("locale", sa.String(length=8), server_default="pt-BR", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("email", name=op.f("uq_users_email")),
    )
    op.create_table(
        "workspaces",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column(
            "timezone", sa.String(length=64), server_default="America/Sao_Paulo", nullable=False
        ),
        sa.Column("currency", sa.String(length=3), server_default="BRL", nullable=False),
        sa.Column("postback_token", sa.String(length=64), nullable=False),
        sa.Column("fallback_url", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workspaces")),
        sa.UniqueConstraint("postback_token", name=op.f("uq_workspaces_postback_token")),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_api_keys_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_keys_user_id"), ["user_id"], unique=False)

    op.create_table(
        "domains",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("host", sa.String(length=253), nullable=False),
        sa.Column("fallback_url", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_domains_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_domains")),
        sa.UniqueConstraint("host", name=op.f("uq_domains_host")),
    )
    with op.batch_alter_table("domains", schema=None) as batch_op:
        batch_op.create_index("ix_domains_workspace", ["workspace_id"], unique=False)

    op.create_table(
        "memberships",
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "role IN ('owner', 'member', 'viewer')", name=op.f("ck_memberships_role")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_memberships_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_memberships_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("workspace_id", "user_id", name=op.f("pk_memberships")),
    )
    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.create_index("ix_memberships_user", ["user_id"], unique=False)

    op.create_table(
        "sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_sessions_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_sessions")),
    )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sessions_user_id"), ["user_id"], unique=False)

    op.create_table(
        "traffic_sources",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_traffic_sources_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_traffic_sources")),
        sa.UniqueConstraint(
            "workspace_id", "name", name=op.f("uq_traffic_sources_workspace_id_name")
        ),
    )
    op.create_table(
        "campaigns",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=253), server_default="", nullable=False),
        sa.Column("slug", sa.String(length=64), nullable=False),
        sa.Column("offer_url", sa.Text(), nullable=False),
        sa.Column("source_id", sa.String(length=32), nullable=True),
        sa.Column("status", sa.String(length=16), server_default="active", nullable=False),
        sa.Column("fallback_url", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('active', 'paused')", name=op.f("ck_campaigns_status")),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["traffic_sources.id"],
            name=op.f("fk_campaigns_source_id_traffic_sources"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_campaigns_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_campaigns")),
        sa.UniqueConstraint("host", "slug", name=op.f("uq_campaigns_host_slug")),
    )
    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.create_index("ix_campaigns_workspace", ["workspace_id"], unique=False)

    op.create_table(
        "clicks",
        sa.Column(
            "id",
            sa.String(length=26).with_variant(sa.String(length=26, collation="C"), "postgresql"),
            nullable=False,
        ),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("campaign_id", sa.String(length=32), nullable=False),
        sa.Column("source_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ip", sa.String(length=45), nullable=False),
        sa.Column("user_agent", sa.Text(), nullable=False),
        sa.Column("visitor_key", sa.String(length=32), nullable=False),
        sa.Column("device_type", sa.String(length=16), nullable=False),
        sa.Column("os", sa.String(length=64), nullable=False),
        sa.Column("browser", sa.String(length=64), nullable=False),
        sa.Column("country", sa.String(length=2), nullable=False),
        sa.Column("referrer", sa.Text(), nullable=False),
        sa.Column("is_bot", sa.Boolean(), nullable=False),
        sa.Column("is_unique", sa.Boolean(), nullable=False),
        sa.Column("creative", sa.Text(), nullable=True),
        sa.Column("ad_id", sa.Text(), nullable=True),
        sa.Column("ad_name", sa.Text(), nullable=True),
        sa.Column("adset_id", sa.Text(), nullable=True),
        sa.Column("adset_name", sa.Text(), nullable=True),
        sa.Column("placement", sa.Text(), nullable=True),
        sa.Column("site_id", sa.Text(), nullable=True),
        sa.Column("keyword", sa.Text(), nullable=True),
        sa.Column("fbclid", sa.Text(), nullable=True),
        sa.Column("gclid", sa.Text(), nullable=True),
        sa.Column("ttclid", sa.Text(), nullable=True),
        sa.Column("utm_source", sa.Text(), nullable=True),
        sa.Column("utm_medium", sa.Text(), nullable=True),
        sa.Column("utm_campaign", sa.Text(), nullable=True),
        sa.Column("utm_term", sa.Text(), nullable=True),
        sa.Column("utm_content", sa.Text(), nullable=True),
        sa.Column("sub1", sa.Text(), nullable=True),
        sa.Column("sub2", sa.Text(), nullable=True),
        sa.Column("sub3", sa.Text(), nullable=True),
        sa.Column("sub4", sa.Text(), nullable=True),
        sa.Column("sub5", sa.Text(), nullable=True),
        sa.Column("sub6", sa.Text(), nullable=True),
        sa.Column("sub7", sa.Text(), nullable=True),
        sa.Column("sub8", sa.Text(), nullable=True),
        sa.Column("sub9", sa.Text(), nullable=True),
        sa.Column("sub10", sa.Text(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["campaign_id"],
            ["campaigns.id"],
            name=op.f("fk_clicks_campaign_id_campaigns"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["traffic_sources.id"],
            name=op.f("fk_clicks_source_id_traffic_sources"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_clicks_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clicks")),
    )
    with op.batch_alter_table("clicks", schema=None) as batch_op:
        batch_op.create_index(
            "ix_clicks_campaign_time", ["campaign_id", "created_at"], unique=False
        )
        batch_op.create_index(
            "ix_clicks_visitor", ["campaign_id", "visitor_key", "created_at"], unique=False
        )
        batch_op.create_index(
            "ix_clicks_workspace_time", ["workspace_id", "created_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("clicks", schema=None) as batch_op:
        batch_op.drop_index("ix_clicks_workspace_time")
        batch_op.drop_index("ix_clicks_visitor")
        batch_op.drop_index("ix_clicks_campaign_time")

    op.drop_table("clicks")
    with op.batch_alter_table("campaigns", schema=None) as batch_op:
        batch_op.drop_index("ix_campaigns_workspace")

    op.drop_table("campaigns")
    op.drop_table("traffic_sources")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_user_id"))

    op.drop_table("sessions")
    with op.batch_alter_table("memberships", schema=None) as batch_op:
        batch_op.drop_index("ix_memberships_user")

    op.drop_table("memberships")
    with op.batch_alter_table("domains", schema=None) as batch_op:
        batch_op.drop_index("ix_domains_workspace")

    op.drop_table("domains")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_user_id"))

    op.drop_table("api_keys")
    op.drop_table("workspaces")
    op.drop_table("users")
    op.drop_table("setup_tokens")
    op.drop_table("instance")
