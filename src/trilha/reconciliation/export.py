"""A reconciliation as a CSV that Excel opens right in Brazil (see trilha.spreadsheet)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from trilha.reconciliation.compare import Line
from trilha.spreadsheet import Cell, csv_text

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


def to_csv(lines: Sequence[Line], *, timezone: str, label: Callable[[str], str] = str) -> bytes:
    """The lines as CSV; ``label`` names the header's columns, verdicts and causes (in the
    reader's language); times are on the workspace's clock."""
    zone = ZoneInfo(timezone)
    header = [label(f"reconciliation.column.{name}") for name in COLUMNS]
    body = ([_field(line, name, zone, label) for name in COLUMNS] for line in lines)
    return csv_text([header, *body]).encode("utf-8")


def _field(line: Line, name: str, zone: ZoneInfo, label: Callable[[str], str]) -> Cell:
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
        return value
    if isinstance(value, datetime):
        return value.astimezone(zone).strftime("%d/%m/%Y %H:%M:%S")
    return str(value)
