"""The rows of a sales export as sales: transaction id, status, value, currency and time. Pure.

A row that cannot be read (no transaction id, an unknown status, a value or date that is none)
is kept with its reason, so that nothing in the file is silently left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from trilha.conversions.status import Status
from trilha.money import AmountError, check_currency, parse_amount
from trilha.reconciliation.layouts import REQUIRED, Columns, fold, read_status
from trilha.reconciliation.table import FileError, Table

MAX_BAD_ROWS_SHOWN = 50
_DATE_FORMATS = (
    "%d/%m/%Y %H:%M:%S",
    "%d/%m/%Y %H:%M",
    "%d/%m/%Y",
    "%d/%m/%y %H:%M",
    "%d/%m/%y",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d",
    "%d-%m-%Y %H:%M:%S",
    "%d-%m-%Y",
)


@dataclass(frozen=True, slots=True)
class Sale:
    row: int  # the file's line (the header is 1)
    txid: str
    status: Status
    raw_status: str
    value: Decimal
    currency: str
    sold_at: datetime  # UTC


@dataclass(frozen=True, slots=True)
class BadRow:
    row: int
    reason: str


@dataclass(frozen=True, slots=True)
class SalesFile:
    sales: tuple[Sale, ...]
    bad_rows: tuple[BadRow, ...]


def check_columns(table: Table, columns: Columns) -> None:
    """FileError naming each chosen column the file lacks, and the columns it has."""
    present = {fold(name) for name in table.header}
    chosen = columns.as_dict()
    missing = [
        f"{name} ({header or '—'})"
        for name, header in chosen.items()
        if (header or name in REQUIRED) and fold(header) not in present
    ]
    if missing:
        have = ", ".join(table.header).replace("'", "")[:800]
        lacking = "; ".join(missing).replace("'", "")
        raise FileError(f"columns not found: '{lacking}'. The file has: '{have}'")


def read_sales(table: Table, columns: Columns, *, timezone: str, currency: str) -> SalesFile:
    """Every row as a sale or a bad row; times without an offset are on ``timezone``'s clock,
    amounts without a currency column in ``currency``."""
    check_columns(table, columns)
    position = {fold(name): i for i, name in enumerate(table.header)}
    index = {
        name: position.get(fold(header), -1) if header else -1
        for name, header in columns.as_dict().items()
    }
    zone = ZoneInfo(timezone)
    sales: list[Sale] = []
    bad: list[BadRow] = []
    seen: set[str] = set()
    for number, cells in enumerate(table.rows, start=2):
        values = {name: cells[i] if i >= 0 else "" for name, i in index.items()}
        try:
            sale = _sale(number, values, zone, currency)
        except ValueError as exc:
            bad.append(BadRow(number, str(exc)))
            continue
        if sale.txid in seen:
            bad.append(BadRow(number, f"transaction {sale.txid[:40]!r} appears twice in the file"))
            continue
        seen.add(sale.txid)
        sales.append(sale)
    return SalesFile(tuple(sales), tuple(bad))


def _sale(number: int, values: dict[str, str], zone: ZoneInfo, default_currency: str) -> Sale:
    txid = values["txid"]
    if not txid:
        raise ValueError("no transaction id")
    status = read_status(values["status"])
    if status is None:
        raise ValueError(f"unknown status {values['status'][:40]!r}")
    try:
        value = parse_amount(values["value"])
        currency = check_currency(values["currency"] or default_currency)
    except AmountError as exc:
        raise ValueError(str(exc)) from None
    return Sale(
        row=number,
        txid=txid[:200],
        status=status,
        raw_status=values["status"][:40],
        value=value,
        currency=currency,
        sold_at=read_time(values["sold_at"], zone),
    )


def read_time(text: str, zone: ZoneInfo) -> datetime:
    """A sale's time as exports write it (``31/05/2024 14:02``, ISO 8601, ...), in UTC.

    >>> read_time("31/05/2024 23:30", ZoneInfo("America/Sao_Paulo")).isoformat()
    '2024-06-01T02:30:00+00:00'
    """
    text = text.strip()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = _formatted(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"date {text[:40]!r} is out of range") from None


def _formatted(text: str) -> datetime:
    for form in _DATE_FORMATS:
        try:
            return datetime.strptime(text, form)  # noqa: DTZ007 -- the zone is added by the caller
        except ValueError:
            continue
    raise ValueError(f"{text[:40]!r} is not a date")
