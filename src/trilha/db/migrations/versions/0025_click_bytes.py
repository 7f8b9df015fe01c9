"""a click in fewer bytes: each user agent stored once, no workspace id, integer times on SQLite

A click held its user agent's text (about 150 bytes, a fifth of the row, from a few thousand
agents) and its workspace's id, with an index on it and the time (about 80 bytes more). The
agents move to ``user_agents``, keyed by the first 64 bits of their MD5
(trilha.visitors.agent_key), and the click keeps the key; its workspace is its campaign's. The
campaign's index holds the click id instead of the time (the id begins with it), so that a
campaign's clicks come in the click log's order. On SQLite a click's time becomes an integer,
its microseconds since 1970 (trilha.db.schema.ClickTime): 8 bytes where its text took 26, in the
row and in the visitor index.

On PostgreSQL the agent column is turned into the key in place (``ALTER COLUMN ... TYPE``
rewrites each month's partition, so the bytes are returned at once); on SQLite the table is
rebuilt (run ``VACUUM`` after to return the pages to the system).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-07 05:40:00.000000
"""

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The first 64 bits of the agent's MD5, signed: trilha.visitors.agent_key (copied: a migration
# keeps computing what it computed when it was written).
POSTGRES_KEY = "CAST(CAST('x' || substr(md5({}), 1, 16) AS bit(64)) AS bigint)"


def _agent_key(user_agent: str) -> int:
    digest = hashlib.md5(user_agent.encode(), usedforsecurity=False).digest()
    return int.from_bytes(digest[:8], signed=True)


# SQLite: a click's time becomes its microseconds since 1970 (trilha.db.schema.ClickTime), from
# the text SQLAlchemy stored ("2026-12-07 05:16:22.123456", UTC); and back.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(stored: str) -> int:
    return (datetime.fromisoformat(stored).replace(tzinfo=UTC) - EPOCH) // timedelta(microseconds=1)


def _stored(micros: int) -> str:
    return (EPOCH + timedelta(microseconds=micros)).strftime("%Y-%m-%d %H:%M:%S.%f")


def upgrade() -> None:
    bind = op.get_bind()
    op.create_table(
        "user_agents",
        sa.Column(
            "key",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("agent", sa.Text(), nullable=False),
    )
    op.drop_index("ix_clicks_workspace_time", table_name="clicks")
    op.drop_index("ix_clicks_campaign_time", table_name="clicks")
    if bind.dialect.name == "postgresql":
        key = POSTGRES_KEY.format("user_agent")
        op.execute(
            f"INSERT INTO user_agents (key, agent) SELECT DISTINCT ON ({key}) {key}, user_agent"  # noqa: S608 -- no input
            " FROM clicks"
        )
        op.drop_column("clicks", "workspace_id")  # its foreign key with it
        op.execute(
            "ALTER TABLE clicks ALTER COLUMN user_agent TYPE bigint"
            f" USING {POSTGRES_KEY.format('user_agent')}"
        )
        op.alter_column("clicks", "user_agent", new_column_name="user_agent_key")
    else:
        _upgrade_sqlite(bind)
    op.create_index("ix_clicks_campaign", "clicks", ["campaign_id", "id"])


def _upgrade_sqlite(bind: sa.Connection) -> None:
    driver = bind.connection.driver_connection
    driver.create_function("trilha_agent_key", 1, _agent_key, deterministic=True)  # type: ignore[union-attr]
    op.execute(
        "INSERT OR IGNORE INTO user_agents (key, agent)"
        " SELECT trilha_agent_key(user_agent), user_agent FROM clicks GROUP BY user_agent"
    )
    driver.create_function("trilha_micros", 1, _micros, deterministic=True)  # type: ignore[union-attr]
    op.add_column("clicks", sa.Column("user_agent_key", sa.BigInteger()))
    op.execute(
        "UPDATE clicks SET user_agent_key = trilha_agent_key(user_agent),"
        " created_at = trilha_micros(created_at)"
    )
    with op.batch_alter_table("clicks", recreate="always") as batch:
        batch.drop_column("workspace_id")
        batch.drop_column("user_agent")
        batch.alter_column("user_agent_key", existing_type=sa.BigInteger(), nullable=False)
        batch.alter_column(
            "created_at", existing_type=sa.DateTime(timezone=True), type_=sa.BigInteger()
        )


def downgrade() -> None:
    bind = op.get_bind()
    op.drop_index("ix_clicks_campaign", table_name="clicks")
    if bind.dialect.name == "postgresql":
        op.add_column("clicks", sa.Column("workspace_id", sa.String(32)))
        op.add_column("clicks", sa.Column("user_agent", sa.Text()))
        op.execute(
            "UPDATE clicks SET workspace_id = campaigns.workspace_id,"
            " user_agent = coalesce((SELECT agent FROM user_agents WHERE key = user_agent_key), '')"
            " FROM campaigns WHERE campaigns.id = clicks.campaign_id"
        )
        op.drop_column("clicks", "user_agent_key")
        op.alter_column("clicks", "workspace_id", existing_type=sa.String(32), nullable=False)
        op.alter_column("clicks", "user_agent", existing_type=sa.Text(), nullable=False)
        op.create_foreign_key(
            "fk_clicks_workspace_id_workspaces",
            "clicks",
            "workspaces",
            ["workspace_id"],
            ["id"],
            ondelete="CASCADE",
        )
    else:
        driver = bind.connection.driver_connection
        driver.create_function("trilha_stored_time", 1, _stored, deterministic=True)  # type: ignore[union-attr]
        op.add_column("clicks", sa.Column("workspace_id", sa.String(32)))
        op.add_column("clicks", sa.Column("user_agent", sa.Text()))
        op.execute(
            "UPDATE clicks SET workspace_id ="
            " (SELECT workspace_id FROM campaigns WHERE campaigns.id = clicks.campaign_id),"
            " user_agent ="
            " coalesce((SELECT agent FROM user_agents WHERE key = clicks.user_agent_key), ''),"
            " created_at = trilha_stored_time(created_at)"
        )
        with op.batch_alter_table("clicks", recreate="always") as batch:
            batch.alter_column(
                "created_at", existing_type=sa.BigInteger(), type_=sa.DateTime(timezone=True)
            )
            batch.drop_column("user_agent_key")
            batch.alter_column("workspace_id", existing_type=sa.String(32), nullable=False)
            batch.alter_column("user_agent", existing_type=sa.Text(), nullable=False)
            batch.create_foreign_key(
                "fk_clicks_workspace_id_workspaces",
                "workspaces",
                ["workspace_id"],
                ["id"],
                ondelete="CASCADE",
            )
    op.create_index("ix_clicks_workspace_time", "clicks", ["workspace_id", "created_at"])
    op.create_index("ix_clicks_campaign_time", "clicks", ["campaign_id", "created_at"])
    op.drop_table("user_agents")
