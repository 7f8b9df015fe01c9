"""An uploaded sales export read as a table of text cells: CSV (``,`` or ``;``, UTF-8 or
Windows-1252) or XLSX (through python-calamine). Pure: bytes in, a table or a FileError out."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time

from python_calamine import CalamineError, CalamineWorkbook

from trilha.errors import InvalidInput

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_UPLOAD_BYTES = MAX_FILE_BYTES + 64 * 1024  # the file and the form around it
MAX_ROWS = 20_000
MAX_COLUMNS = 200
MAX_CELL = 1000
_ZIP = b"PK\x03\x04"  # XLSX files are zip archives
_OLE = b"\xd0\xcf\x11\xe0"  # the old binary .xls


class FileError(InvalidInput):
    """The upload cannot be read as a sales export; the message says why, for people."""

    def __init__(self, message: str) -> None:
        super().__init__({"file": message})


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # each as long as the header


def read_table(data: bytes) -> Table:
    """The file's first sheet (XLSX) or its text (CSV), with its first non-empty row as header.

    >>> read_table("Transação;Valor\\nHP1;97,00\\n".encode())
    Table(header=('Transação', 'Valor'), rows=(('HP1', '97,00'),))
    """
    if not data.strip():
        raise FileError("the file is empty")
    if len(data) > MAX_FILE_BYTES:
        raise FileError(f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    if data.startswith(_OLE):
        raise FileError("old .xls files cannot be read: save the export as .xlsx or .csv")
    rows = _xlsx_rows(data) if data.startswith(_ZIP) else _csv_rows(data)
    return _table(rows)


def _csv_rows(data: bytes) -> list[list[str]]:
    text = _decode(data)
    first_line = text.split("\n", 1)[0]
    delimiter = ";" if first_line.count(";") > first_line.count(",") else ","
    if "\x00" in text:
        raise FileError("this is no CSV or XLSX file")
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=False))
    except csv.Error as exc:
        raise FileError(f"the CSV cannot be read: {exc}") from None


def _decode(data: bytes) -> str:
    """UTF-8 (with or without BOM), else Windows-1252, which Excel in Brazil saves."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _xlsx_rows(data: bytes) -> list[list[str]]:
    try:
        workbook = CalamineWorkbook.from_filelike(io.BytesIO(data))
        if not workbook.sheet_names:
            raise FileError("the spreadsheet has no sheet")
        sheet = workbook.get_sheet_by_index(0)
        cells = sheet.to_python(skip_empty_area=True, nrows=MAX_ROWS + 2)
    except CalamineError as exc:
        raise FileError(f"the spreadsheet cannot be read ({type(exc).__name__})") from None
    except (ValueError, OSError, TypeError):
        raise FileError("the spreadsheet cannot be read") from None
    return [[_cell(value) for value in row] for row in cells]


def _cell(value: object) -> str:
    """A spreadsheet cell as the CSV of the same sheet would hold it."""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _table(rows: Sequence[Sequence[str]]) -> Table:
    cleaned = [[cell.replace("\x00", "").strip()[:MAX_CELL] for cell in row] for row in rows]
    filled = [row for row in cleaned if any(row)]
    if not filled:
        raise FileError("the file has no rows")
    header = _header(filled[0])
    body = filled[1:]
    if len(body) > MAX_ROWS:
        raise FileError(f"the file has more than {MAX_ROWS} rows: export a shorter period")
    width = len(header)
    return Table(header, tuple(tuple((row + [""] * width)[:width]) for row in body))


def _header(row: list[str]) -> tuple[str, ...]:
    while row and not row[-1]:
        row = row[:-1]
    if len(row) > MAX_COLUMNS:
        raise FileError(f"the file has more than {MAX_COLUMNS} columns")
    if len(set(filter(None, row))) < 2:
        raise FileError("the first row should name the columns (at least two)")
    return tuple(row)
