"""Every CSV trilha hands out, as Excel in pt-BR opens it: ``;`` between fields, decimal commas,
a UTF-8 byte order mark (without it Excel reads accents as Windows-1252), and text that cannot
run as a formula."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

BOM = "\ufeff"
# What Excel, LibreOffice and Google Sheets read as the start of a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class Figure:
    """A number already written as the reader's spreadsheet reads it (``-12,50``, ``146,47%``):
    written as it is, where text starting with ``-`` would be quoted. Made from numbers only,
    never from text a visitor or a platform sent."""

    text: str


Cell = str | int | Decimal | Figure | None


def decimal_comma(value: Decimal) -> str:
    """An exact amount as pt-BR spreadsheets read it.

    >>> decimal_comma(Decimal("-1234.50"))
    '-1234,50'
    """
    return format(value, "f").replace(".", ",")


def cell_text(text: str) -> str:
    """Text Excel shows as text: one starting like a formula gets a leading quote.

    >>> cell_text("=HYPERLINK(1)"), cell_text("HP123")
    ("'=HYPERLINK(1)", 'HP123')
    """
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def cell(value: Cell) -> str:
    """One value as Excel in pt-BR reads it; numbers stay numbers, even negative ones, and
    only text is kept from running as a formula.

    >>> cell(Decimal("-12.50")), cell(7), cell(None), cell("-12.50"), cell(Figure("-100,00%"))
    ('-12,50', '7', '', "'-12.50", '-100,00%')
    """
    if value is None:
        return ""
    if isinstance(value, Figure):
        return value.text
    if isinstance(value, Decimal):
        return decimal_comma(value)
    if isinstance(value, int):
        return str(value)
    return cell_text(value)


def csv_text(rows: Iterable[Sequence[Cell]]) -> str:
    """The rows (the header first) as the text of a CSV file, byte order mark included."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    writer.writerows([cell(value) for value in row] for row in rows)
    return BOM + out.getvalue()
