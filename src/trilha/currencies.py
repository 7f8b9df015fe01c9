"""Conversions in another currency than the workspace's: each keeps its original value and
currency, and also its value in the workspace's currency at the rate of its day, with the rate
and where it came from. The rate is taken once, when the conversion is recorded, so later rates
never change history.

Rates come from the workspace's own rate table (the latest rate on or before the day), else from
the European Central Bank's daily reference rates (the ``currencyconverter`` package's bundled
history; after its last day, its last rate). A currency neither knows leaves the conversion
unconverted: reports leave it out and count it apart, until a rate is added to the table, which
converts the conversions still waiting for one (and only those).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Final

from sqlalchemy import Connection, and_, delete, select, update

from trilha.db.schema import conversions, currency_rates, workspaces
from trilha.errors import InvalidInput, NotFound
from trilha.ids import new_id
from trilha.money import CURRENCIES, MINOR_DIGITS, from_minor

if TYPE_CHECKING:
    from currency_converter import CurrencyConverter

MAX_RATE: Final = Decimal("1000000")
RATE_PLACES: Final = Decimal("0.0000000001")  # 10 decimal places, as ECB's and users' rates fit


class RateSource(StrEnum):
    SAME = "same"  # already in the workspace's currency
    ECB = "ecb"
    WORKSPACE = "workspace"  # the workspace's rate table


@dataclass(frozen=True, slots=True)
class Converted:
    value_minor: int
    currency: str
    rate: Decimal  # one unit of the original currency in ``currency``
    source: RateSource


@dataclass(frozen=True, slots=True)
class Rate:
    id: str
    currency: str
    to_currency: str
    day: date
    rate: Decimal


@cache
def _ecb() -> CurrencyConverter:
    """The ECB's history, loaded once (about half a second) on the first foreign conversion."""
    from currency_converter import CurrencyConverter

    return CurrencyConverter(fallback_on_missing_rate=True, fallback_on_wrong_date=True)


def ecb_rate(currency: str, to_currency: str, day: date) -> Decimal | None:
    """One unit of ``currency`` in ``to_currency`` on ``day`` by the ECB, or None.

    >>> ecb_rate("EUR", "EUR", date(2024, 5, 2)), ecb_rate("ARS", "BRL", date(2024, 5, 2))
    (Decimal('1.0000000000'), None)
    >>> ecb_rate("USD", "BRL", date(2024, 5, 2))
    Decimal('5.1434847635')
    """
    ecb = _ecb()
    if currency not in ecb.currencies or to_currency not in ecb.currencies:
        return None
    return Decimal(str(ecb.convert(1, currency, to_currency, date=day))).quantize(
        RATE_PLACES, ROUND_HALF_UP
    )


def convert(
    conn: Connection,
    workspace_id: str,
    value_minor: int,
    currency: str,
    to_currency: str,
    day: date,
) -> Converted | None:
    """A value in the workspace's currency, or None when no rate is known for its currency."""
    if currency == to_currency:
        return Converted(value_minor, to_currency, Decimal(1), RateSource.SAME)
    rate, source = _table_rate(conn, workspace_id, currency, to_currency, day), RateSource.WORKSPACE
    if rate is None:
        rate, source = ecb_rate(currency, to_currency, day), RateSource.ECB
    if rate is None:
        return None
    return Converted(
        apply_rate(value_minor, currency, to_currency, rate), to_currency, rate, source
    )


def apply_rate(value_minor: int, currency: str, to_currency: str, rate: Decimal) -> int:
    """Minor units of ``to_currency``, rounded half up.

    >>> apply_rate(1999, "USD", "BRL", Decimal("5.131"))
    10257
    >>> apply_rate(500, "JPY", "BRL", Decimal("0.0345"))
    1725
    """
    amount = from_minor(value_minor, currency) * rate
    return int(amount.scaleb(MINOR_DIGITS.get(to_currency, 2)).quantize(Decimal(1), ROUND_HALF_UP))


def _table_rate(
    conn: Connection, workspace_id: str, currency: str, to_currency: str, day: date
) -> Decimal | None:
    r = currency_rates.c
    text = conn.execute(
        select(r.rate)
        .where(
            r.workspace_id == workspace_id,
            r.currency == currency,
            r.to_currency == to_currency,
            r.day <= day,
        )
        .order_by(r.day.desc())
        .limit(1)
    ).scalar()
    return None if text is None else Decimal(text)


def converted_columns(converted: Converted | None) -> dict[str, object]:
    """A conversion row's columns for its value in the workspace's currency."""
    if converted is None:
        return dict.fromkeys(("report_value_minor", "report_currency", "rate", "rate_source"))
    return {
        "report_value_minor": converted.value_minor,
        "report_currency": converted.currency,
        "rate": str(converted.rate),
        "rate_source": converted.source.value,
    }


def check_rate(
    currency: str, to_currency: str, day: object, rate: object
) -> tuple[str, date, Decimal]:
    """A rate as a user enters it; every problem at once, as InvalidInput."""
    errors: dict[str, str] = {}
    code = str(currency).strip().upper()
    if code not in CURRENCIES:
        errors["currency"] = "must be an ISO 4217 code such as USD"
    elif code == to_currency:
        errors["currency"] = "is the workspace's own currency"
    try:
        when = day if isinstance(day, date) else date.fromisoformat(str(day).strip())
    except ValueError:
        errors["day"] = "must be a date such as 2026-12-01"
        when = date.min
    try:
        value = Decimal(str(rate).strip().replace(",", ".")).quantize(RATE_PLACES, ROUND_HALF_UP)
    except (InvalidOperation, ValueError):
        value = Decimal(0)
    if not Decimal(0) < value <= MAX_RATE:
        errors["rate"] = f"must be a number above 0 and at most {MAX_RATE}"
    if errors:
        raise InvalidInput(errors)
    return code, when, value


def list_rates(conn: Connection, workspace_id: str, to_currency: str) -> list[Rate]:
    r = currency_rates.c
    query = (
        select(r.id, r.currency, r.to_currency, r.day, r.rate)
        .where(r.workspace_id == workspace_id, r.to_currency == to_currency)
        .order_by(r.currency, r.day.desc())
    )
    return [
        Rate(row.id, row.currency, row.to_currency, row.day, Decimal(row.rate))
        for row in conn.execute(query)
    ]


def save_rate(
    conn: Connection,
    workspace_id: str,
    to_currency: str,
    *,
    currency: object,
    day: object,
    rate: object,
    now: datetime,
) -> tuple[Rate, int]:
    """Add or change the rate of a currency on a day; then convert the workspace's conversions
    that still wait for a rate. The rate, and how many conversions it converted."""
    code, when, value = check_rate(str(currency), to_currency, day, rate)
    r = currency_rates.c
    where = and_(
        r.workspace_id == workspace_id,
        r.currency == code,
        r.to_currency == to_currency,
        r.day == when,
    )
    rate_id = conn.execute(select(r.id).where(where)).scalar()
    if rate_id is None:
        rate_id = new_id()
        conn.execute(
            currency_rates.insert().values(
                id=rate_id,
                workspace_id=workspace_id,
                currency=code,
                to_currency=to_currency,
                day=when,
                rate=str(value),
                created_at=now,
            )
        )
    else:
        conn.execute(update(currency_rates).where(r.id == rate_id).values(rate=str(value)))
    return Rate(rate_id, code, to_currency, when, value), convert_waiting(conn, workspace_id)


def delete_rate(conn: Connection, workspace_id: str, rate_id: str) -> None:
    """Forget a rate; conversions converted with it keep the value they got."""
    r = currency_rates.c
    gone = conn.execute(
        delete(currency_rates).where(r.id == rate_id, r.workspace_id == workspace_id)
    )
    if gone.rowcount == 0:
        raise NotFound("rate not found")


def convert_waiting(conn: Connection, workspace_id: str) -> int:
    """Convert the conversions without a value in the workspace's currency, where a rate is now
    known; those converted before are never touched. How many were converted."""
    to_currency = conn.execute(
        select(workspaces.c.currency).where(workspaces.c.id == workspace_id)
    ).scalar_one()
    v = conversions.c
    waiting = conn.execute(
        select(v.id, v.value_minor, v.currency, v.created_at).where(
            v.workspace_id == workspace_id, v.report_currency.is_(None)
        )
    ).all()
    converted = 0
    for row in waiting:
        result = convert(
            conn, workspace_id, row.value_minor, row.currency, to_currency, row.created_at.date()
        )
        if result is not None:
            conn.execute(
                update(conversions)
                .where(v.id == row.id, v.report_currency.is_(None))
                .values(**converted_columns(result))
            )
            converted += 1
    return converted
