"""Every table, index and constraint of trilha, in one place.

Times are timezone-aware UTC. Identifiers of rows users see in URLs are random strings, so they
cannot be enumerated; click ids are minted by :func:`trilha.ids.mint_click_id`.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

ID = String(32)
UTC = DateTime(timezone=True)
ROLES = "role IN ('owner', 'member', 'viewer')"

# Instance-wide values, such as the key that signs session cookies.
instance = Table(
    "instance",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

users = Table(
    "users",
    metadata,
    Column("id", ID, primary_key=True),
    Column("email", String(254), nullable=False, unique=True),
    Column("name", String(120), nullable=False, server_default=""),
    Column("password_hash", String(255), nullable=False),
    Column("locale", String(8), nullable=False, server_default="pt-BR"),
    Column("created_at", UTC, nullable=False),
)

# A one-time link that lets the first owner choose an e-mail and password.
setup_tokens = Table(
    "setup_tokens",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("created_at", UTC, nullable=False),
    Column("used_at", UTC),
)

sessions = Table(
    "sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("user_id", ID, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", UTC, nullable=False),
    Column("expires_at", UTC, nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", ID, primary_key=True),
    Column("user_id", ID, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("name", String(120), nullable=False),
    Column("prefix", String(16), nullable=False),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("created_at", UTC, nullable=False),
    Column("last_used_at", UTC),
    Column("revoked_at", UTC),
)

workspaces = Table(
    "workspaces",
    metadata,
    Column("id", ID, primary_key=True),
    Column("name", String(120), nullable=False),
    Column("timezone", String(64), nullable=False, server_default="America/Sao_Paulo"),
    Column("currency", String(3), nullable=False, server_default="BRL"),
    Column("postback_token", String(64), nullable=False, unique=True),
    Column("fallback_url", Text),
    Column("created_at", UTC, nullable=False),
)

memberships = Table(
    "memberships",
    metadata,
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", ID, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("created_at", UTC, nullable=False),
    CheckConstraint(ROLES, name="role"),
    Index("ix_memberships_user", "user_id"),
)

# A custom tracking domain: its Host header selects the workspace.
domains = Table(
    "domains",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("host", String(253), nullable=False, unique=True),
    Column("fallback_url", Text),
    Column("created_at", UTC, nullable=False),
    Index("ix_domains_workspace", "workspace_id"),
)

# params: [{"param": "cid", "field": "ad_id"}, ...]: which query parameter feeds which click field.
traffic_sources = Table(
    "traffic_sources",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(120), nullable=False),
    Column("params", JSON, nullable=False),
    Column("created_at", UTC, nullable=False),
    UniqueConstraint("workspace_id", "name"),
)

# host is "" for the shared default domain, so a slug there is unique across workspaces.
campaigns = Table(
    "campaigns",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(200), nullable=False),
    Column("host", String(253), nullable=False, server_default=""),
    Column("slug", String(64), nullable=False),
    Column("offer_url", Text, nullable=False),
    Column("source_id", ID, ForeignKey("traffic_sources.id", ondelete="SET NULL")),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("fallback_url", Text),
    Column("created_at", UTC, nullable=False),
    Column("updated_at", UTC, nullable=False),
    UniqueConstraint("host", "slug"),
    CheckConstraint("status IN ('active', 'paused')", name="status"),
    Index("ix_campaigns_workspace", "workspace_id"),
)

SUBS = tuple(f"sub{n}" for n in range(1, 11))
UTMS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
CLICK_IDS = ("fbclid", "gclid", "ttclid")
AD_FIELDS = (
    "creative",
    "ad_id",
    "ad_name",
    "adset_id",
    "adset_name",
    "placement",
    "site_id",
    "keyword",
)
# Click ids sort by time in byte order, so PostgreSQL compares them with the "C" collation.
# Click columns a query parameter (or a traffic source's mapping) can fill.
DIMENSIONS = AD_FIELDS + CLICK_IDS + UTMS + SUBS

clicks = Table(
    "clicks",
    metadata,
    Column(
        "id", String(26).with_variant(String(26, collation="C"), "postgresql"), primary_key=True
    ),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    Column("source_id", ID, ForeignKey("traffic_sources.id", ondelete="SET NULL")),
    Column("created_at", UTC, nullable=False),
    Column("ip", String(45), nullable=False),
    Column("user_agent", Text, nullable=False),
    Column("visitor_key", String(32), nullable=False),
    Column("device_type", String(16), nullable=False),
    Column("os", String(64), nullable=False),
    Column("browser", String(64), nullable=False),
    Column("country", String(2), nullable=False),
    Column("referrer", Text, nullable=False),
    Column("is_bot", Boolean, nullable=False),
    Column("is_unique", Boolean, nullable=False),
    *(Column(name, Text) for name in DIMENSIONS),
    Column("params", JSON, nullable=False),
    Index("ix_clicks_workspace_time", "workspace_id", "created_at"),
    Index("ix_clicks_campaign_time", "campaign_id", "created_at"),
    Index("ix_clicks_visitor", "campaign_id", "visitor_key", "created_at"),
)
