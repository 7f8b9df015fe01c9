"""status occurred at: when the platform says a conversion's current status happened

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06 20:10:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("conversions") as batch:
        batch.add_column(sa.Column("status_occurred_at", sa.DateTime(timezone=True)))
    with op.batch_alter_table("conversion_status_history") as batch:
        batch.add_column(sa.Column("occurred_at", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("conversion_status_history") as batch:
        batch.drop_column("occurred_at")
    with op.batch_alter_table("conversions") as batch:
        batch.drop_column("status_occurred_at")
