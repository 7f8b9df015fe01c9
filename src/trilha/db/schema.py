"""Every table, index and constraint of trilha, in one place.

Times are timezone-aware UTC. Identifiers of rows users see in URLs are random strings, so they
cannot be enumerated; click ids are minted by :func:`trilha.ids.mint_click_id`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    cast,
    false,
    func,
    select,
    text,
    type_coerce,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import TypeDecorator, TypeEngine

from trilha.dimensions import DIMENSIONS
from trilha.ids import click_id_window

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware datetimes in, aware UTC datetimes out, on both databases.

    SQLite keeps no offset: without this, a -03:00 time would be stored as if it were UTC and
    read back naive.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: trilha stores times with their time zone")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class ClickTime(UTCDateTime):
    """A click's time: on SQLite the microseconds since 1970 as an integer (8 bytes, where the
    text of a time takes 26, in the row and again in each index holding it); on PostgreSQL a
    ``timestamptz``, 8 bytes already. Reads and writes aware datetimes on both; in SQL on SQLite
    it is the integer (see :func:`epoch_seconds`)."""

    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(BigInteger())
        return dialect.type_descriptor(self.impl)

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        moment = super().process_bind_param(value, dialect)
        if moment is None or dialect.name != "sqlite":
            return moment
        return (moment - EPOCH) // _MICROSECOND

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is not None and dialect.name == "sqlite":
            return EPOCH + timedelta(microseconds=value)
        return super().process_result_value(value, dialect)


_MICROSECOND: Final = timedelta(microseconds=1)


def epoch_seconds(dialect: Dialect, moment: ColumnElement[Any]) -> ColumnElement[int]:
    """The whole seconds since 1970 of a time column, in SQL (the floor)."""
    if dialect.name == "postgresql":
        return cast(func.floor(func.extract("epoch", moment)), BigInteger)
    if isinstance(moment.type, ClickTime):
        return type_coerce(moment, BigInteger) // 1_000_000
    return cast(func.strftime("%s", moment), BigInteger)


ID = String(32)
Timestamp = UTCDateTime()
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
    Column("created_at", Timestamp, nullable=False),
)

# A one-time link that lets the first owner choose an e-mail and password.
setup_tokens = Table(
    "setup_tokens",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("created_at", Timestamp, nullable=False),
    Column("used_at", Timestamp),
)

sessions = Table(
    "sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("user_id", ID, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("expires_at", Timestamp, nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", ID, primary_key=True),
    Column("user_id", ID, ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("name", String(120), nullable=False),
    Column("prefix", String(16), nullable=False),
    Column("key_hash", String(64), nullable=False, unique=True),
    Column("created_at", Timestamp, nullable=False),
    Column("last_used_at", Timestamp),
    Column("revoked_at", Timestamp),
)

# Sign-in attempts per account (e-mail) or client address in its current window of time, counted
# by a conditional upsert that every process shares (trilha.login_limits). Keys are stored hashed.
login_attempts = Table(
    "login_attempts",
    metadata,
    Column("kind", String(16), primary_key=True),
    Column("key_hash", String(64), primary_key=True),
    Column("window_end", Timestamp, nullable=False),
    Column("attempts", Integer, nullable=False),
    CheckConstraint("kind IN ('account', 'ip')", name="kind"),
    Index("ix_login_attempts_window_end", "window_end"),
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
    Column("created_at", Timestamp, nullable=False),
    # Off (the default): buyers' personal data is masked in stored payloads (trilha.privacy).
    Column("keeps_buyer_data", Boolean, nullable=False, server_default=false()),
    # Days approved revenue stays on hold (the refund window) before it counts as available.
    Column("hold_days", Integer, nullable=False, server_default="0"),
)

memberships = Table(
    "memberships",
    metadata,
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True),
    Column("user_id", ID, ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
    Column("role", String(16), nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("report_columns", JSON),  # the metrics this member shows in reports; NULL: default
    CheckConstraint(ROLES, name="role"),
    Index("ix_memberships_user", "user_id"),
)

# A link that lets someone join a workspace with a role, making their account if they have none.
# Only the token's hash is kept; the link is shown once, to the owner who made it.
invitations = Table(
    "invitations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("email", String(254), nullable=False),
    Column("role", String(16), nullable=False),
    Column("token_hash", String(64), nullable=False),
    Column("created_by", ID, ForeignKey("users.id", ondelete="SET NULL")),
    Column("created_at", Timestamp, nullable=False),
    Column("expires_at", Timestamp, nullable=False),
    Column("accepted_at", Timestamp),
    UniqueConstraint("token_hash"),
    CheckConstraint(ROLES, name="role"),
    Index("ix_invitations_workspace", "workspace_id"),
)

# A custom tracking domain: once verified, its Host header selects the workspace. A host may be
# pending in several workspaces (a DNS TXT record holding one's token proves control), verified in
# at most one; the tracking hot paths look hosts up through the partial unique index.
VERIFIED_DOMAIN = text("status = 'verified'")
domains = Table(
    "domains",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("host", String(253), nullable=False),
    Column("fallback_url", Text),
    Column("created_at", Timestamp, nullable=False),
    Column("status", String(16), nullable=False, server_default="pending"),
    Column("verification_token", String(64), nullable=False),
    Column("verified_at", Timestamp),
    Column("checked_at", Timestamp),
    Column("check_error", Text),
    # First failed check of the current run of failures; None while checks succeed.
    Column("failing_since", Timestamp),
    UniqueConstraint("workspace_id", "host"),  # also serves the lookups by workspace
    CheckConstraint("status IN ('pending', 'verified')", name="status"),
    Index(
        "ix_domains_verified_host",
        "host",
        unique=True,
        sqlite_where=VERIFIED_DOMAIN,
        postgresql_where=VERIFIED_DOMAIN,
    ),
)

# params: [{"param": "cid", "field": "ad_id"}, ...]: which query parameter feeds which click field.
traffic_sources = Table(
    "traffic_sources",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(120), nullable=False),
    Column("params", JSON, nullable=False),
    Column("created_at", Timestamp, nullable=False),
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
    # The sales platform whose postbacks for this campaign's clicks need no /pb/{merchant}.
    Column("merchant_id", ID, ForeignKey("merchants.id", ondelete="SET NULL")),
    Column("status", String(16), nullable=False, server_default="active"),
    Column("fallback_url", Text),
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
    UniqueConstraint("host", "slug"),
    CheckConstraint("status IN ('active', 'paused')", name="status"),
    Index("ix_campaigns_workspace", "workspace_id"),
)

# Click ids sort by time in byte order, so PostgreSQL compares them with the "C" collation. On
# PostgreSQL the table has a partition a month by id (trilha.db.partitions), which lists them.
clicks = Table(
    "clicks",
    metadata,
    Column(
        "id", String(26).with_variant(String(26, collation="C"), "postgresql"), primary_key=True
    ),
    # The campaign names the workspace: a click holds no workspace id of its own (read a click
    # with its workspace and its user agent through ``click_view``).
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    Column("source_id", ID, ForeignKey("traffic_sources.id", ondelete="SET NULL")),
    Column("created_at", ClickTime(), nullable=False),
    Column("ip", String(45), nullable=False),
    # The user agent's row in user_agents (trilha.visitors.agent_key): a few thousand agents
    # make most clicks, and the text took a fifth of a click's bytes.
    Column("user_agent_key", BigInteger, nullable=False),
    # The visitor on the campaign (trilha.visitors.visitor_key): 8 bytes, and its index alone
    # answers the 24 h uniqueness check.
    Column("visitor_key", BigInteger, nullable=False),
    Column("device_type", String(16), nullable=False),
    Column("os", String(64), nullable=False),
    Column("browser", String(64), nullable=False),
    Column("country", String(2), nullable=False),
    Column("referrer", Text, nullable=False),
    Column("is_bot", Boolean, nullable=False),
    Column("is_unique", Boolean, nullable=False),
    *(Column(name, Text) for name in DIMENSIONS),
    Column("params", JSON, nullable=False),
    # What the click's URL said it cost (?cost=0.05), in cost units of the workspace's currency.
    Column("cost", BigInteger),
    # A campaign's clicks in time order (their ids begin with their time): the click log's
    # pages of one campaign, a report's clicks of a window (trilha.db.schema.clicks_made).
    Index("ix_clicks_campaign", "campaign_id", "id"),
    Index("ix_clicks_visitor", "visitor_key", "created_at"),
    postgresql_partition_by="RANGE (id)",
)

# Each user agent once, by its key (trilha.visitors.agent_key); click retention deletes it once
# no click holds it (trilha.agent_retention). On SQLite the key is the table's rowid.
user_agents = Table(
    "user_agents",
    metadata,
    Column(
        "key",
        BigInteger().with_variant(Integer, "sqlite"),
        primary_key=True,
        autoincrement=False,
    ),
    Column("agent", Text, nullable=False),
)


def clicks_made(since: datetime | None, until: datetime | None) -> list[ColumnElement[bool]]:
    """The clicks made from ``since`` to before ``until`` (None: no bound), said on their time and
    again on their ids, which begin with it (trilha.ids.mint_click_id): the primary key, and
    PostgreSQL's months, then skip the clicks outside the window."""
    low, high = click_id_window(since, until)
    window = []
    if since is not None:
        window.append(clicks.c.created_at >= since)
    if until is not None:
        window.append(clicks.c.created_at < until)
    if low is not None:
        window.append(clicks.c.id >= low)
    if high is not None:
        window.append(clicks.c.id < high)
    return window


def workspace_clicks(workspace_id: str) -> ColumnElement[bool]:
    """The clicks of a workspace: of its campaigns."""
    return clicks.c.campaign_id.in_(
        select(campaigns.c.id).where(campaigns.c.workspace_id == workspace_id)
    )


# A click as it reads: its row with its campaign's workspace and its user agent's text (its key
# left out). Filter by ``campaigns.c.workspace_id``; the campaign's other columns are not in it.
# The agent is a subquery rather than a join: SQLite then still stops reading a campaign's
# clicks, in its index's order, once a page is full.
_agent_of_click = (
    select(user_agents.c.agent)
    .where(user_agents.c.key == clicks.c.user_agent_key)
    .scalar_subquery()
)
click_view = select(
    *(column for column in clicks.c if column.name != "user_agent_key"),
    campaigns.c.workspace_id,
    func.coalesce(_agent_of_click, "").label("user_agent"),
).select_from(clicks.join(campaigns, campaigns.c.id == clicks.c.campaign_id))

# What a workspace counts: built-in types (LEAD, SALE, ...) are created with the workspace.
event_types = Table(
    "event_types",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(40), nullable=False),
    Column("counts_as_conversion", Boolean, nullable=False),
    Column("counts_as_revenue", Boolean, nullable=False),
    Column("is_builtin", Boolean, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    UniqueConstraint("workspace_id", "name"),
)

# A sales platform account: its preset plus what the user changed (field paths, rules, auth).
merchants = Table(
    "merchants",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("key", String(40), nullable=False),  # names the merchant in /pb/{key}
    Column("name", String(120), nullable=False),
    Column("preset", String(40), nullable=False),
    Column("field_paths", JSON, nullable=False),
    Column("rules", JSON, nullable=False),
    Column("value_choice", String(8), nullable=False, server_default="gross"),
    Column("value_unit", String(8)),  # NULL: the preset's unit
    Column("ip_allowlist", JSON, nullable=False),
    Column("secret", Text),
    Column("dedupe_mode", String(16), nullable=False, server_default="txid"),
    Column("dedupe_window_minutes", Integer, nullable=False, server_default="60"),
    Column("hold_days", Integer),  # NULL: the workspace's hold period
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
    UniqueConstraint("workspace_id", "key"),
    CheckConstraint("value_choice IN ('gross', 'net')", name="value_choice"),
    CheckConstraint(
        "dedupe_mode IN ('txid', 'click', 'window', 'allow_repeats')",
        name="dedupe_mode",
    ),
)

STATUSES = "status IN ('approved', 'pending', 'declined', 'refunded', 'chargeback')"

# One conversion per dedupe key: "tx:<txid>", "click:<click>:<event>", "ftd:<click>", ...
# The first value recorded is never changed; the status changes, with a history row each time.
conversions = Table(
    "conversions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column(
        "click_id",
        String(26).with_variant(String(26, collation="C"), "postgresql"),
        ForeignKey("clicks.id", ondelete="SET NULL"),
    ),
    Column("raw_click_id", String(200)),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="SET NULL")),
    Column("source_id", ID, ForeignKey("traffic_sources.id", ondelete="SET NULL")),
    Column("merchant_id", ID, ForeignKey("merchants.id", ondelete="SET NULL")),
    Column("event_type", String(40), nullable=False),
    Column("status", String(16), nullable=False),
    Column("value_minor", Integer, nullable=False),
    Column("currency", String(3), nullable=False),
    Column("txid", String(200)),
    Column("dedupe_key", String(300), nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("status_changed_at", Timestamp, nullable=False),
    # When the platform says the current status happened (its event's own time), where its
    # payload tells: a report of an older event never overwrites it. NULL: not told.
    Column("status_occurred_at", Timestamp),
    Column("attached_at", Timestamp),
    # Normalised SHA-256 of the buyer's e-mail and phone, what conversion APIs match on; the
    # buyer's data itself is never kept here (trilha.privacy).
    Column("buyer_email_sha256", String(64)),
    Column("buyer_phone_sha256", String(64)),
    Column("is_test", Boolean, nullable=False, server_default=false()),  # "send test postback"
    # The value in the workspace's currency at the rate of its day, taken once (trilha.currencies);
    # NULL while no rate is known for its currency.
    Column("report_value_minor", BigInteger),
    Column("report_currency", String(3)),
    Column("rate", String(40)),
    Column("rate_source", String(16)),
    UniqueConstraint("workspace_id", "dedupe_key"),
    CheckConstraint(STATUSES, name="status"),
    Index("ix_conversions_workspace_time", "workspace_id", "created_at"),
    Index("ix_conversions_click", "click_id"),
    Index("ix_conversions_orphans", "workspace_id", "raw_click_id"),
)

conversion_status_history = Table(
    "conversion_status_history",
    metadata,
    Column("id", ID, primary_key=True),
    Column("conversion_id", ID, ForeignKey("conversions.id", ondelete="CASCADE"), nullable=False),
    Column("from_status", String(16)),  # NULL: the conversion was created
    Column("to_status", String(16), nullable=False),
    # Checked at commit: the postback's log row is written after the conversion it created.
    # In byte order, as the log's ids: retention empties a dropped month's range of them.
    Column(
        "postback_id",
        String(32).with_variant(String(32, collation="C"), "postgresql"),
        ForeignKey("postback_log.id", ondelete="SET NULL", deferrable=True, initially="DEFERRED"),
    ),
    Column("actor", String(80), nullable=False),  # "postback", "replay" or "user:<id>"
    Column("created_at", Timestamp, nullable=False),
    Column("occurred_at", Timestamp),  # the platform's own time of the event, when it tells
    Index("ix_status_history_conversion", "conversion_id", "created_at"),
    # Without it, writing a log row (the deferred key's parent) or trimming old ones would scan
    # the whole history for rows that point at it.
    Index("ix_status_history_postback", "postback_id"),
)

# Every postback request, as received (secrets masked), with what became of it and why.
# In a partition a month on PostgreSQL, as clicks (trilha.db.partitions): ids in byte order.
postback_log = Table(
    "postback_log",
    metadata,
    Column(
        "id", String(32).with_variant(String(32, collation="C"), "postgresql"), primary_key=True
    ),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE")),
    Column("merchant_id", ID, ForeignKey("merchants.id", ondelete="SET NULL")),
    Column("received_at", Timestamp, nullable=False),
    Column("method", String(8), nullable=False),
    Column("path", String(200), nullable=False),
    Column("query", Text, nullable=False),
    Column("headers", JSON, nullable=False),
    Column("body", Text, nullable=False),
    Column("body_truncated", Boolean, nullable=False),
    Column("source_ip", String(45), nullable=False),
    Column("auth_failed", Boolean, nullable=False),  # a failed secret or signature: no replay
    Column("outcome", String(16), nullable=False),
    Column("reason", Text, nullable=False),
    Column("conversion_id", ID, ForeignKey("conversions.id", ondelete="SET NULL")),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="SET NULL")),
    Column("click_id", String(200)),
    Column("txid", String(200)),
    Column("event_type", String(40)),
    Column("status", String(16)),
    Column("value", String(40)),
    Column("currency", String(3)),
    Column("details", JSON, nullable=False),
    Column("processing_us", Integer, nullable=False),
    Column("replay_of", ID),
    # Set when the retention (or "forget this buyer") emptied query, headers and body.
    Column("payload_purged_at", Timestamp),
    Index("ix_postback_log_workspace_time", "workspace_id", "received_at"),
    Index("ix_postback_log_received", "received_at"),
    postgresql_partition_by="RANGE (id)",
)

# Postbacks no workspace claims (no token, an unknown one, a host that is no custom domain):
# counted per source and hour, never stored whole (see trilha.postbacks.unmatched).
unmatched_postbacks = Table(
    "unmatched_postbacks",
    metadata,
    Column("hour", Timestamp, primary_key=True),
    Column("source", String(45), primary_key=True),  # an IP, an IPv6 /64, or "other"
    Column("requests", Integer, nullable=False),
    Column("sampled", Boolean, nullable=False),  # whether its first requests are kept as samples
    Column("first_at", Timestamp, nullable=False),
    Column("last_at", Timestamp, nullable=False),
    Index("ix_unmatched_postbacks_last", "last_at"),
)

# The first few unmatched postbacks of a source each hour: cut short, secrets masked.
unmatched_samples = Table(
    "unmatched_samples",
    metadata,
    Column("id", ID, primary_key=True),
    Column("hour", Timestamp, nullable=False),
    Column("source", String(45), nullable=False),
    Column("received_at", Timestamp, nullable=False),
    Column("source_ip", String(45), nullable=False),
    Column("method", String(8), nullable=False),
    Column("path", String(200), nullable=False),
    Column("host", String(253), nullable=False),
    Column("query", Text, nullable=False),
    Column("headers", JSON, nullable=False),
    Column("body", Text, nullable=False),
    Column("body_bytes", Integer, nullable=False),  # the size received; ``body`` may be cut
    Column("reason", Text, nullable=False),
    Index("ix_unmatched_samples_hour", "hour"),
)

# Click counts per UTC hour (hours since 1970-01-01 UTC), written in the transaction of the clicks
# they sum (trilha.reports.rollups). Hours serve every time zone whose offset is whole hours;
# source_id and sub1 are "" where the click has none, so that they can be part of the key.
click_hours = Table(
    "click_hours",
    metadata,
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True),
    Column("hour", Integer, primary_key=True, autoincrement=False),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True),
    Column("source_id", ID, primary_key=True),
    Column("clicks", Integer, nullable=False),
    Column("unique_clicks", Integer, nullable=False),
    Column("bot_clicks", Integer, nullable=False),
)

# The same, one level deeper: the campaign → source → sub1 drilldown.
click_sub1_hours = Table(
    "click_sub1_hours",
    metadata,
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True),
    Column("hour", Integer, primary_key=True, autoincrement=False),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True),
    Column("source_id", ID, primary_key=True),
    Column("sub1", Text, primary_key=True),
    Column("clicks", Integer, nullable=False),
    Column("unique_clicks", Integer, nullable=False),
    Column("bot_clicks", Integer, nullable=False),
)

# The same per UTC day (days since 1970-01-01): a month's drilldown reads the whole days here
# and only the hours at either end of the period (a local day need not start at 00:00 UTC) above.
click_sub1_days = Table(
    "click_sub1_days",
    metadata,
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True),
    Column("day", Integer, primary_key=True, autoincrement=False),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True),
    Column("source_id", ID, primary_key=True),
    Column("sub1", Text, primary_key=True),
    Column("clicks", Integer, nullable=False),
    Column("unique_clicks", Integer, nullable=False),
    Column("bot_clicks", Integer, nullable=False),
)

# How a merchant's sales export names the columns reconciliation reads ({"txid": "Transação",
# ...}): chosen once, on the first upload, and used for every upload after.
reconciliation_columns = Table(
    "reconciliation_columns",
    metadata,
    Column("merchant_id", ID, ForeignKey("merchants.id", ondelete="CASCADE"), primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("layout", String(16), nullable=False),
    Column("columns", JSON, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
)

# One uploaded sales export compared with the conversions: its lines as they were found then
# (bounded by the upload's row limit), so that the result reads and downloads the same later.
reconciliations = Table(
    "reconciliations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("merchant_id", ID, ForeignKey("merchants.id", ondelete="SET NULL")),
    Column("filename", String(200), nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("window_start", Timestamp),
    Column("window_end", Timestamp),
    Column("counts", JSON, nullable=False),
    Column("bad_rows", JSON, nullable=False),
    Column("lines", JSON, nullable=False),
    Index("ix_reconciliations_workspace_time", "workspace_id", "created_at"),
)

# The workspace's own exchange rates, for currencies the ECB's reference rates lack (or to use its
# own): one unit of ``currency`` in ``to_currency`` from ``day`` on.
currency_rates = Table(
    "currency_rates",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("to_currency", String(3), nullable=False),
    Column("day", Date, nullable=False),
    Column("rate", String(40), nullable=False),  # a decimal, exact
    Column("created_at", Timestamp, nullable=False),
    UniqueConstraint("workspace_id", "currency", "to_currency", "day"),
)

# A campaign's cost model from a day on: the model in force on a (report's local) day is the one
# with the latest starts_on on or before it, so a change never rewrites the days before it.
# rate is in cost units (trilha.costs.units): per click, unique click or conversion, per thousand
# impressions; for revshare, hundredths of a percent. event_types: the CPA model's, [] for others.
cost_models = Table(
    "cost_models",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE"), nullable=False),
    Column("starts_on", Date, nullable=False),
    Column("model", String(16), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("rate", BigInteger, nullable=False),
    Column("counts_bots", Boolean, nullable=False, server_default=false()),
    Column("event_types", JSON, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    UniqueConstraint("campaign_id", "starts_on"),
    CheckConstraint(
        "model IN ('cpc', 'cpuc', 'cpm', 'cpa', 'revshare', 'click_url', 'manual')", name="model"
    ),
    CheckConstraint("rate >= 0", name="rate"),
    Index("ix_cost_models_workspace", "workspace_id"),
)

# What a campaign cost on a day (entered or imported), and the impressions the CPM model prices.
# source_id is "" for the whole campaign; cost in cost units, NULL where only impressions are.
cost_days = Table(
    "cost_days",
    metadata,
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE"), primary_key=True),
    Column("day", Date, primary_key=True),
    Column("source_id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("currency", String(3), nullable=False),
    Column("cost", BigInteger),
    Column("impressions", BigInteger),
    Column("updated_at", Timestamp, nullable=False),
    CheckConstraint("cost >= 0 AND impressions >= 0", name="amounts"),
    Index("ix_cost_days_workspace_day", "workspace_id", "day"),
)

# Where conversions are told onwards: a tracker's postback URL, a signed webhook, Meta's
# Conversions API (trilha.deliveries). ``url`` is a template; ``secret`` (an access token, a
# webhook's signing key) is never shown back, only masked. Empty ``event_types`` or
# ``statuses`` mean all; a set filter (campaign, source, sub1) must match.
destinations = Table(
    "destinations",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("name", String(120), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("url", Text, nullable=False),
    Column("method", String(8), nullable=False, server_default="GET"),
    Column("event_types", JSON, nullable=False),
    Column("statuses", JSON, nullable=False),
    Column("campaign_id", ID, ForeignKey("campaigns.id", ondelete="CASCADE")),
    Column("source_id", ID, ForeignKey("traffic_sources.id", ondelete="CASCADE")),
    Column("sub_id", String(200)),
    Column("secret", Text),
    Column("currency", String(3)),  # values sent in it; NULL: each conversion's own
    Column("config", JSON, nullable=False),  # the kind's own settings (pixel id, event names)
    Column("status", String(16), nullable=False, server_default="verifying"),
    Column("status_reason", Text, nullable=False, server_default=""),
    # 3xx/4xx answers in a row (408 and 429 aside); a success resets it.
    Column("consecutive_failures", Integer, nullable=False, server_default="0"),
    # First temporary failure (timeout, 5xx) since the last success; None after a success.
    Column("failing_since", Timestamp),
    # Requests in a row that got no answer at all (timeouts, refused connections); any answer
    # resets it. Past trilha.deliveries.lifecycle.UNANSWERED_LIMIT its deliveries wait out
    # ``paused_until`` (a circuit breaker), so a hanging host holds no one else's slots.
    Column("unanswered", Integer, nullable=False, server_default="0"),
    Column("paused_until", Timestamp),
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
    CheckConstraint(
        "kind IN ('postback', 'webhook', 'meta_capi', 'google_ads', 'tiktok_events')",
        name="kind",
    ),
    CheckConstraint("method IN ('GET', 'POST')", name="method"),
    CheckConstraint("status IN ('verifying', 'active', 'inactive')", name="status"),
    Index("ix_destinations_workspace", "workspace_id"),
)

# The outbox: one row per conversion change a destination wants, written in the transaction
# that recorded the change. A worker claims a due one by setting ``lease_until``; a worker that
# dies leaves a lease that runs out, and the delivery is claimed again.
deliveries = Table(
    "deliveries",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("destination_id", ID, ForeignKey("destinations.id", ondelete="CASCADE"), nullable=False),
    Column("conversion_id", ID, ForeignKey("conversions.id", ondelete="CASCADE"), nullable=False),
    Column("conversion_status", String(16), nullable=False),  # the change it tells of
    Column("state", String(16), nullable=False),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("next_attempt_at", Timestamp, nullable=False),
    Column("lease_until", Timestamp),
    Column("last_error", Text, nullable=False, server_default=""),
    Column("created_at", Timestamp, nullable=False),
    Column("finished_at", Timestamp),
    UniqueConstraint("destination_id", "conversion_id", "conversion_status"),
    CheckConstraint("state IN ('pending', 'sent', 'failed', 'skipped')", name="state"),
    Index("ix_deliveries_due", "state", "next_attempt_at"),
    Index("ix_deliveries_workspace_time", "workspace_id", "created_at"),
    Index("ix_deliveries_conversion", "conversion_id"),
)

# Every try of a delivery: the request line (secrets masked), the answer or the error.
# In a partition a month on PostgreSQL, as clicks (trilha.db.partitions): ids in byte order.
delivery_attempts = Table(
    "delivery_attempts",
    metadata,
    Column(
        "id", String(32).with_variant(String(32, collation="C"), "postgresql"), primary_key=True
    ),
    Column("delivery_id", ID, ForeignKey("deliveries.id", ondelete="CASCADE"), nullable=False),
    Column("started_at", Timestamp, nullable=False),
    Column("request", Text, nullable=False),
    Column("status_code", Integer),
    Column("latency_ms", Integer, nullable=False),
    Column("response", Text, nullable=False),
    Column("error", Text, nullable=False),
    Column("outcome", String(16), nullable=False),
    Index("ix_delivery_attempts_delivery", "delivery_id", "started_at"),
    Index("ix_delivery_attempts_started", "started_at"),
    postgresql_partition_by="RANGE (id)",
)

# What the workspace's people are told in the dashboard (a destination switched off, ...).
notices = Table(
    "notices",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
    Column("destination_id", ID, ForeignKey("destinations.id", ondelete="CASCADE")),
    Column("message", Text, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("read_at", Timestamp),
    Column("emailed_at", Timestamp),  # set when a worker takes it to e-mail the owners
    Index("ix_notices_workspace_time", "workspace_id", "created_at"),
)
