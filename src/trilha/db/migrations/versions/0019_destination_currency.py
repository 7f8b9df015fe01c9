"""destination currency: the currency a destination is sent values in

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-05 08:15:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("destinations") as batch:
        batch.add_column(sa.Column("currency", sa.String(3)))


def downgrade() -> None:
    with op.batch_alter_table("destinations") as batch:
        batch.drop_column("currency")
