"""buyer data: hashes on conversions, test conversions, purged payloads, the clear-data setting

Conversions keep normalised SHA-256 hashes of the buyer's e-mail and phone and say whether a
"send test postback" made them; log entries say when their payload was purged; a workspace says
whether it keeps buyers' data in clear (off: masked, the default).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 21:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("conversions") as batch:
        batch.add_column(sa.Column("buyer_email_sha256", sa.String(length=64)))
        batch.add_column(sa.Column("buyer_phone_sha256", sa.String(length=64)))
        batch.add_column(
            sa.Column("is_test", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("postback_log") as batch:
        batch.add_column(sa.Column("payload_purged_at", sa.DateTime(timezone=True)))
    with op.batch_alter_table("workspaces") as batch:
        batch.add_column(
            sa.Column("keeps_buyer_data", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("workspaces") as batch:
        batch.drop_column("keeps_buyer_data")
    with op.batch_alter_table("postback_log") as batch:
        batch.drop_column("payload_purged_at")
    with op.batch_alter_table("conversions") as batch:
        batch.drop_column("is_test")
        batch.drop_column("buyer_phone_sha256")
        batch.drop_column("buyer_email_sha256")
