"""hold period: days approved revenue stays on hold, per workspace and per merchant

Revision ID: 0017
Revises: 0015
Create Date: 2026-12-05 07:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("workspaces") as batch:
        batch.add_column(sa.Column("hold_days", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("merchants") as batch:
        batch.add_column(sa.Column("hold_days", sa.Integer()))


def downgrade() -> None:
    with op.batch_alter_table("merchants") as batch:
        batch.drop_column("hold_days")
    with op.batch_alter_table("workspaces") as batch:
        batch.drop_column("hold_days")
