"""count and sample postbacks that match no workspace

Requests without a valid token were stored whole in the postback log, where no workspace could
see them; they are now counted per source and hour, and the first few sampled, cut short. The
log rows stored so far stay until the log's retention trims them.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04 16:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "unmatched_postbacks",
        sa.Column("hour", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=45), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("sampled", sa.Boolean(), nullable=False),
        sa.Column("first_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("hour", "source", name=op.f("pk_unmatched_postbacks")),
    )
    op.create_index("ix_unmatched_postbacks_last", "unmatched_postbacks", ["last_at"])
    op.create_table(
        "unmatched_samples",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("hour", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source", sa.String(length=45), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("source_ip", sa.String(length=45), nullable=False),
        sa.Column("method", sa.String(length=8), nullable=False),
        sa.Column("path", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=253), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("body_bytes", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_unmatched_samples")),
    )
    op.create_index("ix_unmatched_samples_hour", "unmatched_samples", ["hour"])


def downgrade() -> None:
    op.drop_index("ix_unmatched_samples_hour", table_name="unmatched_samples")
    op.drop_table("unmatched_samples")
    op.drop_index("ix_unmatched_postbacks_last", table_name="unmatched_postbacks")
    op.drop_table("unmatched_postbacks")
