"""report columns: the metrics a member chose to see in reports, remembered per workspace

Revision ID: 0015
Revises: 0013
Create Date: 2026-12-05 03:45:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("memberships") as batch:
        batch.add_column(sa.Column("report_columns", sa.JSON()))


def downgrade() -> None:
    with op.batch_alter_table("memberships") as batch:
        batch.drop_column("report_columns")
