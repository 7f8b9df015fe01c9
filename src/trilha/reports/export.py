"""A report as CSV that Excel in pt-BR opens as it is: ``;`` between fields, decimal commas,
and a UTF-8 byte order mark so accents survive."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from decimal import Decimal

from trilha.reports.builder import Report
from trilha.reports.metrics import Counts, metrics

BOM = "\ufeff"


def cell(value: int | Decimal | str | None) -> str:
    """One value as Excel in pt-BR reads it.

    >>> cell(Decimal("1234.50")), cell(7), cell(None)
    ('1234,50', '7', '')
    """
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return str(value).replace(".", ",")
    return str(value)


def report_csv(report: Report, columns: Sequence[str]) -> str:
    """The levels, then ``columns`` (metric names), a row per report row, then the totals."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    levels = [d.value for d in report.selection.group_by]
    writer.writerow([*levels, *columns])
    for row in report.rows:
        writer.writerow([*row.labels, *_cells(row.counts, report.currency, columns)])
    totals = ["total", *[""] * (len(levels) - 1)] if levels else []
    writer.writerow([*totals, *_cells(report.totals, report.currency, columns)])
    return BOM + out.getvalue()


def _cells(counts: Counts, currency: str, columns: Sequence[str]) -> list[str]:
    values = metrics(counts, currency)
    return [cell(values[name]) for name in columns]
