"""A report as CSV for Excel in pt-BR (see trilha.spreadsheet)."""

from __future__ import annotations

from collections.abc import Sequence

from trilha.reports.builder import Report
from trilha.reports.metrics import Counts, metrics
from trilha.spreadsheet import Cell, csv_text


def report_csv(report: Report, columns: Sequence[str]) -> str:
    """The levels, then ``columns`` (metric names), a row per report row, then the totals."""
    levels = [d.value for d in report.selection.group_by]
    totals = ["total", *[""] * (len(levels) - 1)] if levels else []
    return csv_text(
        [
            [*levels, *columns],
            *([*row.labels, *_cells(row.counts, report.currency, columns)] for row in report.rows),
            [*totals, *_cells(report.totals, report.currency, columns)],
        ]
    )


def _cells(counts: Counts, currency: str, columns: Sequence[str]) -> list[Cell]:
    values = metrics(counts, currency)
    return [values[name] for name in columns]
