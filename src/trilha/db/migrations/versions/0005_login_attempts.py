"""login attempts: sign-in limits per account and per client address

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 16:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_attempts",
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("window_end", sa.DateTime(timezone=True), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.CheckConstraint("kind IN ('account', 'ip')", name=op.f("ck_login_attempts_kind")),
        sa.PrimaryKeyConstraint("kind", "key_hash", name=op.f("pk_login_attempts")),
    )
    op.create_index("ix_login_attempts_window_end", "login_attempts", ["window_end"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_login_attempts_window_end", table_name="login_attempts")
    op.drop_table("login_attempts")
