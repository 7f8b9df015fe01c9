"""destination pause: requests left unanswered in a row, and the pause they set

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06 20:40:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("destinations") as batch:
        batch.add_column(sa.Column("unanswered", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("paused_until", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("destinations") as batch:
        batch.drop_column("paused_until")
        batch.drop_column("unanswered")
