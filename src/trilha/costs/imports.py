"""Read a CSV of costs and impressions per day (pure): every bad line is reported at once, with
its line number, and nothing is kept unless every line is good.

The first line names the columns, separated by ``;`` or ``,``: ``day`` (2026-03-05 or
05/03/2026), and ``cost``, ``impressions`` or both; ``source`` (a traffic source's name or id)
is optional. A cost is read as people type it: ``12,50``, ``1.234,56``, ``12.50``.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from datetime import date, datetime

from trilha.costs.days import CostEntry
from trilha.costs.units import parse_cost
from trilha.errors import InvalidInput

MAX_BYTES = 1_000_000
MAX_LINES = 5000
MAX_ERRORS = 100  # reported; the rest are counted
COLUMNS = ("day", "cost", "impressions", "source")


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
    header, rows = [name.strip().lower() for name in table[0]], table[1:]
    _check_header(header)
    entries: list[CostEntry] = []
    errors: dict[str, str] = {}
    seen: set[tuple[date, str | None]] = set()
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        try:
            entry = _entry(dict(zip(header, row, strict=False)), currency, sources)
            if (entry.day, entry.source_id) in seen:
                raise ValueError("this day (and source) is on an earlier line too")
            seen.add((entry.day, entry.source_id))
            entries.append(entry)
        except (ValueError, InvalidInput) as error:
            errors[f"line {number}"] = _message(error)
    if errors:
        raise InvalidInput(_bounded(errors))
    if not entries:
        raise InvalidInput({"file": "has no lines after the header"})
    return entries


def _check_header(header: list[str]) -> None:
    unknown = [name for name in header if name not in COLUMNS]
    if unknown or "day" not in header or not {"cost", "impressions"} & set(header):
        raise InvalidInput(
            {"line 1": "columns must be day, then cost and/or impressions, and optionally source"}
        )


def _entry(cells: Mapping[str, str], currency: str, sources: Mapping[str, str]) -> CostEntry:
    cost_text = cells.get("cost", "").strip()
    impressions_text = cells.get("impressions", "").strip().replace(".", "")
    source_text = cells.get("source", "").strip()
    if source_text and source_text not in sources:
        raise ValueError(f"no traffic source {source_text[:60]!r}")
    if impressions_text and not impressions_text.isdigit():
        raise ValueError(f"impressions {impressions_text[:20]!r} is not a whole number")
    return CostEntry(
        day=_day(cells.get("day", "").strip()),
        source_id=sources[source_text] if source_text else None,
        cost=parse_cost(cost_text, currency) if cost_text else None,
        impressions=int(impressions_text) if impressions_text else None,
    ).check()


def _day(text: str) -> date:
    for pattern in ("%Y-%m-%d", "%d/%m/%Y"):
        try:
            return datetime.strptime(text, pattern).date()  # noqa: DTZ007 -- a date, no time
        except ValueError:
            continue
    raise ValueError(f"day {text[:20]!r} is not YYYY-MM-DD or DD/MM/YYYY")


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
