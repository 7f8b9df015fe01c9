"""A report as CSV for Excel (see trilha.spreadsheet): in the reader's language with the
dashboard's values (the dashboard's export), or with metric names and plain numbers for
programs (the API's)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from babel.numbers import format_decimal, format_percent, get_currency_precision

from trilha.i18n import Translator
from trilha.reports.builder import Report
from trilha.reports.metrics import MULTIPLES, PERCENTAGES, Counts, metrics
from trilha.reports.shown import row_label
from trilha.spreadsheet import Cell, Figure, csv_text


def report_csv(report: Report, columns: Sequence[str]) -> str:
    """The levels, then ``columns`` (metric names), a row per report row, the sum of the rows
    left out when the report was cut (``others (N rows)``), then the totals; rates as
    fractions, for programs to read."""
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


def shown_report_csv(report: Report, columns: Sequence[str], t: Translator) -> str:
    """The report as the dashboard shows it, in ``t``'s language: its levels' and metrics'
    names, rows named as on the screen (orphans "(none)", days and statuses translated), the
    rest in "Others (N rows)" and a "Total" row; rates as percentages (``146,47%``), amounts
    with the language's decimal mark and no symbol, so the spreadsheet reads numbers."""
    group_by = report.selection.group_by
    header: list[Cell] = [
        *(t(f"report_level.{d.value}") for d in group_by),
        *(t(f"metric.{name}") for name in columns),
    ]
    lines: list[list[Cell]] = [header]
    for row in report.rows:
        labels = [row_label(t, d, label) for d, label in zip(group_by, row.labels, strict=True)]
        lines.append([*labels, *_shown(t, row.counts, report.currency, columns)])
    padding = [""] * (len(group_by) - 1)
    if report.others is not None and group_by:
        others = t("reports.others", n=report.row_count - len(report.rows))
        lines.append([others, *padding, *_shown(t, report.others, report.currency, columns)])
    totals = [t("reports.total"), *padding] if group_by else []
    lines.append([*totals, *_shown(t, report.totals, report.currency, columns)])
    return csv_text(lines)


def _shown(t: Translator, counts: Counts, currency: str, columns: Sequence[str]) -> list[Cell]:
    values = metrics(counts, currency)
    return [_figure(t, name, values[name], currency) for name in columns]


def _figure(t: Translator, name: str, value: int | Decimal | None, currency: str) -> Cell:
    """One metric for a spreadsheet in ``t``'s language; empty where the screen shows "—".

    >>> from trilha.i18n import translator
    >>> pt, en = translator("pt-BR"), translator("en")
    >>> [_figure(pt, n, v, "BRL") for n, v in (
    ...     ("roi", Decimal("1.46468")), ("profit", Decimal("-1234.5")), ("roas", Decimal("2.5")))]
    [Figure(text='146,47%'), Figure(text='-1234,50'), Figure(text='2,50')]
    >>> _figure(en, "cr", Decimal("0.5"), "BRL"), _figure(en, "clicks", 1234, "BRL")
    (Figure(text='50.00%'), 1234)
    """
    if value is None:
        return ""
    if isinstance(value, int):
        return value
    locale = t.locale.replace("-", "_")
    if name in PERCENTAGES:
        return Figure(format_percent(value, format="0.00%", locale=locale))
    places = 2 if name in MULTIPLES else get_currency_precision(currency)  # money's cents
    pattern = "0." + "0" * places if places else "0"
    return Figure(format_decimal(value, format=pattern, locale=locale))
