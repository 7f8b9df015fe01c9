"""delivery attempts in a partition a month on PostgreSQL (trilha.db.partitions); nothing on SQLite

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07 02:40:00.000000

As 0022 did for clicks, in the migration's one transaction; the ids first compare in byte order
(the "C" collation), which the months' ranges need.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from trilha.db.partitions import ATTEMPTS, MONTHS_AHEAD, Month, create_default, create_partition

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    "ix_delivery_attempts_delivery": ["delivery_id", "started_at"],
    "ix_delivery_attempts_started": ["started_at"],
}


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rebuild(partitioned=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rebuild(partitioned=False)


def _rebuild(*, partitioned: bool) -> None:
    conn = op.get_bind()
    op.rename_table("delivery_attempts", "attempts_before")
    # A partition key's column cannot change: the plain table's does, the old or the new one.
    collate = "ALTER TABLE {} ALTER COLUMN id TYPE varchar(32) COLLATE {}"
    if partitioned:
        conn.exec_driver_sql(collate.format("attempts_before", '"C"'))
    conn.exec_driver_sql(
        "CREATE TABLE delivery_attempts"
        " (LIKE attempts_before INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        + (" PARTITION BY RANGE (id)" if partitioned else "")
    )
    if not partitioned:
        conn.exec_driver_sql(collate.format("delivery_attempts", '"default"'))
    if partitioned:
        oldest = conn.execute(sa.text("SELECT min(started_at) FROM attempts_before")).scalar()
        now = datetime.now(UTC)
        month, last = Month.of(min(oldest or now, now)), Month.of(now)
        for _ in range(MONTHS_AHEAD):
            last = last.next()
        while month != last.next():
            create_partition(conn, ATTEMPTS, month)
            month = month.next()
        create_default(conn, ATTEMPTS)
    conn.exec_driver_sql("INSERT INTO delivery_attempts SELECT * FROM attempts_before")
    op.drop_table("attempts_before")
    op.create_primary_key("pk_delivery_attempts", "delivery_attempts", ["id"])
    for name, columns in INDEXES.items():
        op.create_index(name, "delivery_attempts", columns)
    op.create_foreign_key(
        "fk_delivery_attempts_delivery_id_deliveries",
        "delivery_attempts",
        "deliveries",
        ["delivery_id"],
        ["id"],
        ondelete="CASCADE",
    )
