"""Read a CSV of costs and impressions per day (pure): every bad line is reported at once, with
its line number, and nothing is kept unless every line is good.

The first line names the columns, separated by ``;`` or ``,``, in English or Portuguese, in any
case, with or without accents: ``day``/``dia`` (2026-03-05 or 05/03/2026), and ``cost``/``custo``,
``impressions``/``impressões`` or both; ``source``/``fonte`` (a traffic source's name or id) is
optional. A cost is read as people type it (``12,50``, ``1.234,56``, ``12.50``); an ambiguous
``1.234`` as trilha.costs.figures says.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import TypeVar

from trilha.costs.days import CostEntry
from trilha.costs.figures import (
    DecimalMark,
    bare_cost,
    check_ascii,
    cost_mark,
    impressions_mark,
    plain_cost,
    settled_mark,
    whole_number,
)
from trilha.costs.units import parse_cost
from trilha.errors import InvalidInput

MAX_BYTES = 1_000_000
MAX_LINES = 5000
MAX_ERRORS = 100  # reported; the rest are counted
# Each column's names, folded (no accents, lower case): English first, then Portuguese.
COLUMNS = {
    "day": ("day", "dia", "data"),
    "cost": ("cost", "custo", "gasto"),
    "impressions": ("impressions", "impressoes"),
    "source": ("source", "fonte", "origem"),
}
_COLUMN_OF = {name: column for column, names in COLUMNS.items() for name in names}


_T = TypeVar("_T")


class CellError(ValueError):
    """What is wrong with one cell, and its column's name as the file writes it."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(reason)
        self.name = name


def read_cost_csv(data: bytes, *, currency: str, sources: Mapping[str, str]) -> list[CostEntry]:
    """The entries of a CSV; ``sources`` maps source names and ids to ids."""
    if len(data) > MAX_BYTES:
        raise InvalidInput({"file": f"is larger than {MAX_BYTES // 1000} kB"})
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput({"file": "is not UTF-8 text"}) from None
    lines = text.splitlines()
    if not lines:
        raise InvalidInput({"file": "is empty"})
    if len(lines) > MAX_LINES + 1:
        raise InvalidInput({"file": f"has more than {MAX_LINES} lines"})
    delimiter = ";" if ";" in lines[0] else ","
    try:  # newline="": the reader itself ends lines at \n, \r\n or a lone \r
        table = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
    except csv.Error:
        raise InvalidInput({"file": "is not a CSV file that can be read"}) from None
    if not table:
        raise InvalidInput({"file": "is empty"})
    header, rows = _columns(table[0]), table[1:]
    numbered = [(number, _cells(header, row)) for number, row in enumerate(rows, start=2)]
    filled = [(number, cells) for number, cells in numbered if cells]
    mark = _decimal_mark([cells for _, cells in filled])
    entries: list[CostEntry] = []
    errors: dict[str, str] = {}
    seen: set[tuple[date, str | None]] = set()
    for number, cells in filled:
        try:
            entry = _entry(cells, currency, sources, mark)
            if (entry.day, entry.source_id) in seen:
                raise ValueError("this day (and source) is on an earlier line too")
            seen.add((entry.day, entry.source_id))
            entries.append(entry)
        except CellError as error:
            errors[f"line {number}, {error.name}"] = str(error)
        except (ValueError, InvalidInput) as error:
            errors[f"line {number}"] = _message(error)
    if errors:
        raise InvalidInput(_bounded(errors))
    if not entries:
        raise InvalidInput({"file": "has no lines after the header"})
    return entries


def _columns(names: Sequence[str]) -> list[tuple[str, str]]:
    """Each column's name as the file writes it, and the column it is."""
    header = [(name.strip(), _COLUMN_OF.get(_folded(name), "")) for name in names]
    columns = [column for _, column in header]
    if "" in columns or "day" not in columns or not {"cost", "impressions"} & set(columns):
        raise InvalidInput(
            {
                "line 1": "columns must be day (dia), then cost (custo) and/or impressions "
                "(impressões), and optionally source (fonte)"
            }
        )
    return header


def _folded(name: str) -> str:
    """A column's name without accents, in lower case: ``Impressões`` is ``impressoes``."""
    decomposed = unicodedata.normalize("NFKD", name.strip())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _cells(header: Sequence[tuple[str, str]], row: Sequence[str]) -> dict[str, tuple[str, str]]:
    """A line's cells by column: the column's name as written, and the cell's text."""
    return {
        column: (name, cell.strip())
        for (name, column), cell in zip(header, row, strict=False)
        if cell.strip()
    }


def _decimal_mark(lines: Sequence[Mapping[str, tuple[str, str]]]) -> DecimalMark | None:
    costs = (_cost_mark(cells["cost"][1]) for cells in lines if "cost" in cells)
    counts = (impressions_mark(c["impressions"][1]) for c in lines if "impressions" in c)
    return settled_mark([*costs, *counts])


def _cost_mark(text: str) -> DecimalMark | None:
    try:
        return cost_mark(bare_cost(text))
    except ValueError:  # refused on its own line
        return None


def _entry(
    cells: Mapping[str, tuple[str, str]],
    currency: str,
    sources: Mapping[str, str],
    mark: DecimalMark | None,
) -> CostEntry:
    def cell(column: str) -> str:
        return cells.get(column, ("", ""))[1]

    source_text = cell("source")
    if source_text and source_text not in sources:
        raise CellError(cells["source"][0], f"no traffic source {source_text[:60]!r}")
    day = _figure(cells, "day", _day)
    if day is None:
        raise ValueError("the day is missing")
    return CostEntry(
        day=day,
        source_id=sources[source_text] if source_text else None,
        cost=_figure(cells, "cost", lambda t: parse_cost(plain_cost(bare_cost(t), mark), currency)),
        impressions=_figure(cells, "impressions", lambda t: whole_number(check_ascii(t))),
    ).check()


def _figure(
    cells: Mapping[str, tuple[str, str]], column: str, read: Callable[[str], _T]
) -> _T | None:
    """The column's value, or None if the line leaves it empty; a refusal names the column."""
    if column not in cells:
        return None
    name, text = cells[column]
    try:
        return read(text)
    except ValueError as error:
        raise CellError(name, str(error)) from None


def _day(text: str) -> date:
    if not text.isascii():
        raise ValueError(f"{text[:20]!r} is not written with the digits 0 to 9")
    for pattern in ("%Y-%m-%d", "%d/%m/%Y"):
        try:
            return datetime.strptime(text, pattern).date()  # noqa: DTZ007 -- a date, no time
        except ValueError:
            continue
    raise ValueError(f"{text[:20]!r} is not YYYY-MM-DD or DD/MM/YYYY")


def _message(error: ValueError | InvalidInput) -> str:
    if isinstance(error, InvalidInput):
        return "; ".join(f"{name}: {text}" for name, text in error.fields.items())
    return str(error)


def _bounded(errors: dict[str, str]) -> dict[str, str]:
    if len(errors) <= MAX_ERRORS:
        return errors
    kept = dict(list(errors.items())[:MAX_ERRORS])
    kept["more"] = f"{len(errors) - MAX_ERRORS} more bad lines"
    return kept
