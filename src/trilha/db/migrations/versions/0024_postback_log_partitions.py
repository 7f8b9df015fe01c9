"""the postback log in a partition a month on PostgreSQL (trilha.db.partitions); nothing on SQLite

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07 05:10:00.000000

As 0022 and 0023 did for clicks and delivery attempts, in the migration's one transaction. The
log's ids, and the history's references to them, first compare in byte order (the "C"
collation): the months' ranges need it, and retention empties a dropped month's references by
their range. Entries from before ids began with their millisecond (random ids, before
2026-12-03) fall in the default partition and go row by row, as before.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from trilha.db.partitions import (
    MONTHS_AHEAD,
    POSTBACK_LOG,
    Month,
    create_default,
    create_partition,
)

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    "ix_postback_log_workspace_time": ["workspace_id", "received_at"],
    "ix_postback_log_received": ["received_at"],
}
REFERENCES = {  # name: (column, table, ON DELETE)
    "fk_postback_log_workspace_id_workspaces": ("workspace_id", "workspaces", "CASCADE"),
    "fk_postback_log_merchant_id_merchants": ("merchant_id", "merchants", "SET NULL"),
    "fk_postback_log_conversion_id_conversions": ("conversion_id", "conversions", "SET NULL"),
    "fk_postback_log_campaign_id_campaigns": ("campaign_id", "campaigns", "SET NULL"),
}
HISTORY_REFERENCE = "fk_conversion_status_history_postback_id_postback_log"


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rebuild(partitioned=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rebuild(partitioned=False)


def _rebuild(*, partitioned: bool) -> None:
    conn = op.get_bind()
    op.drop_constraint(HISTORY_REFERENCE, "conversion_status_history", type_="foreignkey")
    op.rename_table("postback_log", "postback_log_before")
    # A partition key's column cannot change: the plain table's does, the old or the new one.
    collate = "ALTER TABLE {} ALTER COLUMN {} TYPE varchar(32) COLLATE {}"
    collation = '"C"' if partitioned else '"default"'
    conn.exec_driver_sql(collate.format("conversion_status_history", "postback_id", collation))
    if partitioned:
        conn.exec_driver_sql(collate.format("postback_log_before", "id", collation))
    conn.exec_driver_sql(
        "CREATE TABLE postback_log"
        " (LIKE postback_log_before INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        + (" PARTITION BY RANGE (id)" if partitioned else "")
    )
    if not partitioned:
        conn.exec_driver_sql(collate.format("postback_log", "id", collation))
    if partitioned:
        oldest = conn.execute(sa.text("SELECT min(received_at) FROM postback_log_before")).scalar()
        now = datetime.now(UTC)
        month, last = Month.of(min(oldest or now, now)), Month.of(now)
        for _ in range(MONTHS_AHEAD):
            last = last.next()
        while month != last.next():
            create_partition(conn, POSTBACK_LOG, month)
            month = month.next()
        create_default(conn, POSTBACK_LOG)
    conn.exec_driver_sql("INSERT INTO postback_log SELECT * FROM postback_log_before")
    op.drop_table("postback_log_before")  # its partitions, key, indexes and references with it
    op.create_primary_key("pk_postback_log", "postback_log", ["id"])
    for name, columns in INDEXES.items():
        op.create_index(name, "postback_log", columns)
    for name, (column, table, on_delete) in REFERENCES.items():
        op.create_foreign_key(name, "postback_log", table, [column], ["id"], ondelete=on_delete)
    op.create_foreign_key(
        HISTORY_REFERENCE,
        "conversion_status_history",
        "postback_log",
        ["postback_id"],
        ["id"],
        ondelete="SET NULL",
        deferrable=True,
        initially="DEFERRED",
    )
