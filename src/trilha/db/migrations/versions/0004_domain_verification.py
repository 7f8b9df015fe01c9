"""custom domains need proof of control

A domain is pending until a DNS TXT record at _trilha.<host> holds its token; only verified
domains route traffic. A host may now be pending in several workspaces and verified in one, so its
global unique constraint gives way to a unique index over verified domains. Domains that exist at
upgrade stay verified (no install loses routing) and get a token of their own, so the daily
re-check covers them like the others.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04 16:30:00.000000
"""

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

VERIFIED = sa.text("status = 'verified'")


def upgrade() -> None:
    with op.batch_alter_table("domains") as batch:
        batch.add_column(
            sa.Column("status", sa.String(16), nullable=False, server_default="pending")
        )
        batch.add_column(sa.Column("verification_token", sa.String(64)))
        batch.add_column(sa.Column("verified_at", sa.DateTime(timezone=True)))
        batch.add_column(sa.Column("checked_at", sa.DateTime(timezone=True)))
        batch.add_column(sa.Column("check_error", sa.Text()))
        batch.add_column(sa.Column("failing_since", sa.DateTime(timezone=True)))
    conn = op.get_bind()
    conn.execute(sa.text("UPDATE domains SET status = 'verified', verified_at = created_at"))
    domains = sa.table("domains", sa.column("id", sa.String), sa.column("verification_token"))
    for (domain_id,) in conn.execute(sa.select(domains.c.id)).all():
        conn.execute(
            domains.update()
            .where(domains.c.id == domain_id)
            .values(verification_token=secrets.token_urlsafe(32))
        )
    with op.batch_alter_table("domains") as batch:
        batch.alter_column("verification_token", existing_type=sa.String(64), nullable=False)
        batch.drop_constraint("uq_domains_host", type_="unique")
        batch.drop_index("ix_domains_workspace")
        batch.create_unique_constraint("uq_domains_workspace_id_host", ["workspace_id", "host"])
        batch.create_check_constraint("ck_domains_status", "status IN ('pending', 'verified')")
    op.create_index(
        "ix_domains_verified_host",
        "domains",
        ["host"],
        unique=True,
        sqlite_where=VERIFIED,
        postgresql_where=VERIFIED,
    )


def downgrade() -> None:
    op.drop_index("ix_domains_verified_host", table_name="domains")
    op.execute("DELETE FROM domains WHERE status <> 'verified'")
    with op.batch_alter_table("domains") as batch:
        batch.drop_constraint("ck_domains_status", type_="check")
        batch.drop_constraint("uq_domains_workspace_id_host", type_="unique")
        batch.create_unique_constraint("uq_domains_host", ["host"])
        batch.create_index("ix_domains_workspace", ["workspace_id"], unique=False)
        for column in (
            "failing_since",
            "check_error",
            "checked_at",
            "verified_at",
            "verification_token",
            "status",
        ):
            batch.drop_column(column)
