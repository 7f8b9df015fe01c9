"""index the status history by postback

Every postback log row written is the parent of a deferred foreign key from the status history,
and SQLite looks for the rows that point at a new or deleted parent: without an index that is a
scan of the whole history per postback (and per trimmed log row).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-03 09:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_status_history_postback", "conversion_status_history", ["postback_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_status_history_postback", table_name="conversion_status_history")
