"""currencies: each conversion's value in the workspace's currency at the rate of its day, and
the workspace's own rate table

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05 07:10:00.000000

Conversions already in the workspace's currency get their own value (rate 1). Those in another
currency are converted at the ECB's reference rate of the day they were recorded (the last known
rate after the bundled history ends); a currency the ECB lacks stays unconverted, as new ones do,
until the workspace adds a rate for it.
"""

from collections.abc import Sequence
from datetime import date
from decimal import ROUND_HALF_UP, Decimal

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Minor-unit digits other than 2, as trilha.money had them when this was written.
_NONE = ("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI")
_DIGITS = {
    **dict.fromkeys((*_NONE, "VND", "VUV", "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(["BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"], 3),
}


def upgrade() -> None:
    with op.batch_alter_table("conversions") as batch:
        batch.add_column(sa.Column("report_value_minor", sa.BigInteger()))
        batch.add_column(sa.Column("report_currency", sa.String(3)))
        batch.add_column(sa.Column("rate", sa.String(40)))
        batch.add_column(sa.Column("rate_source", sa.String(16)))
    op.create_table(
        "currency_rates",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "workspace_id",
            sa.String(32),
            sa.ForeignKey("workspaces.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("to_currency", sa.String(3), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("rate", sa.String(40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("workspace_id", "currency", "to_currency", "day"),
    )
    op.execute(
        "UPDATE conversions SET report_value_minor = value_minor, report_currency = currency, "
        "rate = '1', rate_source = 'same' WHERE currency = "
        "(SELECT currency FROM workspaces WHERE workspaces.id = conversions.workspace_id)"
    )
    _convert_the_others()


def _convert_the_others() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.text(
            "SELECT c.id, c.value_minor, c.currency, c.created_at, w.currency AS to_currency "
            "FROM conversions c JOIN workspaces w ON w.id = c.workspace_id "
            "WHERE c.report_currency IS NULL"
        )
    ).all()
    if not rows:
        return
    from currency_converter import CurrencyConverter

    ecb = CurrencyConverter(fallback_on_missing_rate=True, fallback_on_wrong_date=True)
    for row in rows:
        if row.currency not in ecb.currencies or row.to_currency not in ecb.currencies:
            continue
        when = date.fromisoformat(str(row.created_at)[:10])  # a datetime, or SQLite's text
        rate = Decimal(str(ecb.convert(1, row.currency, row.to_currency, date=when)))
        rate = rate.quantize(Decimal("0.0000000001"), ROUND_HALF_UP)
        amount = Decimal(row.value_minor).scaleb(-_DIGITS.get(row.currency, 2)) * rate
        minor = amount.scaleb(_DIGITS.get(row.to_currency, 2)).quantize(Decimal(1), ROUND_HALF_UP)
        conn.execute(
            sa.text(
                "UPDATE conversions SET report_value_minor = :v, report_currency = :c, "
                "rate = :r, rate_source = 'ecb' WHERE id = :id"
            ),
            {"v": int(minor), "c": row.to_currency, "r": str(rate), "id": row.id},
        )


def downgrade() -> None:
    op.drop_table("currency_rates")
    with op.batch_alter_table("conversions") as batch:
        batch.drop_column("rate_source")
        batch.drop_column("rate")
        batch.drop_column("report_currency")
        batch.drop_column("report_value_minor")
