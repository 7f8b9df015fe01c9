"""A report as CSV for Excel in pt-BR (see trilha.spreadsheet)."""

from __future__ import annotations

from collections.abc import Sequence

from trilha.reports.builder import Report
from trilha.reports.metrics import Counts, metrics
from trilha.spreadsheet import Cell, csv_text


def report_csv(report: Report, columns: Sequence[str]) -> str:
    """The levels, then ``columns`` (metric names), a row per report row, the sum of the rows
    left out when the report was cut (``others (N rows)``), then the totals."""
    levels = [d.value for d in report.selection.group_by]
    totals = ["total", *[""] * (len(levels) - 1)] if levels else []
    lines: list[list[Cell]] = [
        [*levels, *columns],
        *([*row.labels, *_cells(row.counts, report.currency, columns)] for row in report.rows),
    ]
    if report.others is not None and levels:
        left_out = report.row_count - len(report.rows)
        label: list[Cell] = [f"others ({left_out} rows)", *[""] * (len(levels) - 1)]
        lines.append([*label, *_cells(report.others, report.currency, columns)])
    return csv_text([*lines, [*totals, *_cells(report.totals, report.currency, columns)]])


def _cells(counts: Counts, currency: str, columns: Sequence[str]) -> list[Cell]:
    values = metrics(counts, currency)
    return [values[name] for name in columns]
