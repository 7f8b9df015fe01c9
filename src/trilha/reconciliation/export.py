"""A reconciliation as a CSV that Excel opens right in Brazil: ``;`` between fields, decimal
commas, a UTF-8 byte-order mark (without it Excel reads the accents as Windows-1252)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from trilha.reconciliation.compare import Line

COLUMNS = (
    "verdict",
    "txid",
    "row",
    "platform_status",
    "platform_value",
    "platform_currency",
    "sold_at",
    "trilha_status",
    "trilha_value",
    "trilha_currency",
    "recorded_at",
    "is_orphan",
    "cause",
    "reason",
    "conversion_id",
    "postback_id",
)
BOM = "\ufeff"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def decimal_comma(value: Decimal) -> str:
    """An exact amount as pt-BR spreadsheets read it.

    >>> decimal_comma(Decimal("1234.50"))
    '1234,50'
    """
    return format(value, "f").replace(".", ",")


def cell_text(text: str) -> str:
    """Text Excel shows as text: one starting like a formula gets a leading quote.

    >>> cell_text("=HYPERLINK(1)"), cell_text("HP123")
    ("'=HYPERLINK(1)", 'HP123')
    """
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def to_csv(lines: Sequence[Line], *, timezone: str, label: Callable[[str], str] = str) -> bytes:
    """The lines as CSV; ``label`` names the header's columns, verdicts and causes (in the
    reader's language); times are on the workspace's clock."""
    zone = ZoneInfo(timezone)
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    writer.writerow([label(f"reconciliation.column.{name}") for name in COLUMNS])
    for line in lines:
        writer.writerow([_field(line, name, zone, label) for name in COLUMNS])
    return (BOM + out.getvalue()).encode("utf-8")


def _field(line: Line, name: str, zone: ZoneInfo, label: Callable[[str], str]) -> str:
    value = getattr(line, name)
    if value is None:
        return ""
    if name == "verdict":
        return label(f"reconciliation.verdict.{value}")
    if name == "cause":
        return label(f"reconciliation.cause.{value}")
    if isinstance(value, bool):
        return label("common.yes") if value else ""
    if isinstance(value, Decimal):
        return decimal_comma(value)
    if isinstance(value, datetime):
        return value.astimezone(zone).strftime("%d/%m/%Y %H:%M:%S")
    return cell_text(str(value))
