"""a visitor key of 8 bytes, and the uniqueness index on it and the time alone

The 24 h uniqueness check's index held the campaign id, a 32-character key and the time: about a
quarter of what a click took on disk, and a random page written per click. The key is now a
64-bit integer of the campaign, IP and user agent (trilha.visitors.visitor_key) and the index
holds it and the time. Every click stored so far is keyed again, in SQL, so that a visitor's
next click within the day still finds the ones before.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04 21:00:00.000000
"""

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The first 64 bits of the MD5 of "campaign\nip\nuser agent", signed: trilha.visitors.visitor_key
# (copied: a migration keeps computing what it computed when it was written).
POSTGRES_KEY = (
    "CAST(CAST('x' || substr(md5(campaign_id || E'\\n' || ip || E'\\n' || user_agent), 1, 16)"
    " AS bit(64)) AS bigint)"
)
CHUNK = 10_000


def _visitor_key(campaign_id: str, ip: str, user_agent: str) -> int:
    text = f"{campaign_id}\n{ip}\n{user_agent}".encode()
    return int.from_bytes(hashlib.md5(text, usedforsecurity=False).digest()[:8], signed=True)


def _old_visitor_key(ip: str, user_agent: str) -> str:
    return hashlib.blake2b(f"{ip}\n{user_agent}".encode(), digest_size=16).hexdigest()


def upgrade() -> None:
    op.drop_index("ix_clicks_visitor", table_name="clicks")
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        driver = bind.connection.driver_connection
        driver.create_function("trilha_visitor_key", 3, _visitor_key, deterministic=True)  # type: ignore[union-attr]
        op.execute(
            "UPDATE clicks SET visitor_key = trilha_visitor_key(campaign_id, ip, user_agent)"
        )
        # The copy into the rebuilt table turns the keys (stored as text so far) into integers.
        with op.batch_alter_table("clicks", recreate="always") as batch:
            batch.alter_column(
                "visitor_key", existing_type=sa.String(32), type_=sa.BigInteger(), nullable=False
            )
    else:
        op.alter_column(
            "clicks",
            "visitor_key",
            existing_type=sa.String(32),
            type_=sa.BigInteger(),
            existing_nullable=False,
            postgresql_using=POSTGRES_KEY,
        )
    op.create_index("ix_clicks_visitor", "clicks", ["visitor_key", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_clicks_visitor", table_name="clicks")
    bind = op.get_bind()
    with op.batch_alter_table("clicks") as batch:
        batch.alter_column(
            "visitor_key",
            existing_type=sa.BigInteger(),
            type_=sa.String(32),
            existing_nullable=False,
            postgresql_using="CAST(visitor_key AS VARCHAR(32))",
        )
    clicks = sa.table(
        "clicks",
        sa.column("id"),
        sa.column("ip"),
        sa.column("user_agent"),
        sa.column("visitor_key"),
    )
    after = ""
    while True:
        rows = bind.execute(
            sa.select(clicks.c.id, clicks.c.ip, clicks.c.user_agent)
            .where(clicks.c.id > after)
            .order_by(clicks.c.id)
            .limit(CHUNK)
        ).all()
        if not rows:
            break
        bind.execute(
            clicks.update().where(clicks.c.id == sa.bindparam("click")),
            [{"click": r.id, "visitor_key": _old_visitor_key(r.ip, r.user_agent)} for r in rows],
        )
        after = rows[-1].id
    op.create_index("ix_clicks_visitor", "clicks", ["campaign_id", "visitor_key", "created_at"])
