"""clicks in a partition a month on PostgreSQL (trilha.db.partitions); nothing on SQLite

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07 02:30:00.000000

The table is built again, in the migration's one transaction: a new ``clicks`` like the old one,
partitioned by RANGE (id), with a partition for each month from the oldest click's through
``MONTHS_AHEAD`` months after the current one and a DEFAULT partition; the rows copied across;
the old table dropped; then the primary key, indexes and references, built over the copied rows.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from trilha.db.partitions import CLICKS, MONTHS_AHEAD, Month, create_default, create_partition

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    "ix_clicks_workspace_time": ["workspace_id", "created_at"],
    "ix_clicks_campaign_time": ["campaign_id", "created_at"],
    "ix_clicks_visitor": ["visitor_key", "created_at"],
}
REFERENCES = {  # name: (column, table, ON DELETE)
    "fk_clicks_workspace_id_workspaces": ("workspace_id", "workspaces", "CASCADE"),
    "fk_clicks_campaign_id_campaigns": ("campaign_id", "campaigns", "CASCADE"),
    "fk_clicks_source_id_traffic_sources": ("source_id", "traffic_sources", "SET NULL"),
}


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rebuild(partitioned=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rebuild(partitioned=False)


def _rebuild(*, partitioned: bool) -> None:
    conn = op.get_bind()
    op.drop_constraint("fk_conversions_click_id_clicks", "conversions", type_="foreignkey")
    op.rename_table("clicks", "clicks_before")
    conn.exec_driver_sql(
        "CREATE TABLE clicks (LIKE clicks_before INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
        + (" PARTITION BY RANGE (id)" if partitioned else "")
    )
    if partitioned:
        oldest = conn.execute(sa.text("SELECT min(created_at) FROM clicks_before")).scalar()
        now = datetime.now(UTC)
        month, last = Month.of(min(oldest or now, now)), Month.of(now)
        for _ in range(MONTHS_AHEAD):
            last = last.next()
        while month != last.next():
            create_partition(conn, CLICKS, month)
            month = month.next()
        create_default(conn, CLICKS)
    conn.exec_driver_sql("INSERT INTO clicks SELECT * FROM clicks_before")
    op.drop_table("clicks_before")  # its partitions, key, indexes and references with it
    op.create_primary_key("pk_clicks", "clicks", ["id"])
    for name, columns in INDEXES.items():
        op.create_index(name, "clicks", columns)
    for name, (column, table, on_delete) in REFERENCES.items():
        op.create_foreign_key(name, "clicks", table, [column], ["id"], ondelete=on_delete)
    op.create_foreign_key(
        "fk_conversions_click_id_clicks",
        "conversions",
        "clicks",
        ["click_id"],
        ["id"],
        ondelete="SET NULL",
    )
