"""Cost amounts as exact integers of cost units: a ten-thousandth of the currency's minor unit
(a millionth of a real), so that a CPC of R$ 0,0125 or a revenue share of 33,33 % is exact (pure).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

from trilha.money import MINOR_DIGITS, AmountError, parse_amount

EXTRA_DIGITS = 4
BASIS_POINTS = 10_000  # a percent with two decimals, as an integer: 33,33 % is 3333
PER_THOUSAND = 1000
MAX_CLICK_COST = Decimal(1000)  # a click's URL saying more is a mistake, and is ignored
_CLICK_COST = re.compile(r"\d{1,4}(?:[.,]\d{1,8})?")


def _digits(currency: str) -> int:
    return MINOR_DIGITS.get(currency, 2) + EXTRA_DIGITS


def to_cost_units(amount: Decimal, currency: str) -> int:
    """An amount in cost units, refusing amounts finer than a cost unit.

    >>> to_cost_units(Decimal("0.0125"), "BRL"), to_cost_units(Decimal("3"), "JPY")
    (12500, 30000)
    """
    scaled = amount.scaleb(_digits(currency))
    if scaled != scaled.to_integral_value():
        raise AmountError(f"{amount} has more than {_digits(currency)} decimal places")
    return int(scaled)


def parse_cost(raw: object, currency: str) -> int:
    """A cost as people type it (``0,05``, ``1.234,56``, ``12.5``) in cost units."""
    return to_cost_units(parse_amount(raw), currency)


def parse_percent(raw: object) -> int:
    """A percent from 0 to 100 with up to two decimals, in basis points.

    >>> parse_percent("33,33"), parse_percent(50)
    (3333, 5000)
    """
    percent = parse_amount(raw)
    if percent > 100:
        raise AmountError("a percent is at most 100")
    scaled = percent.scaleb(2)
    if scaled != scaled.to_integral_value():
        raise AmountError(f"{percent} has more than 2 decimal places")
    return int(scaled)


def from_cost_units(units: int, currency: str) -> Decimal:
    """The exact amount of ``units``.

    >>> from_cost_units(12500, "BRL")
    Decimal('0.012500')
    """
    return Decimal(units).scaleb(-_digits(currency))


def in_minor_units(units: int, currency: str) -> Decimal:
    """The amount rounded (half up) to the currency's minor unit, as reports show it.

    >>> in_minor_units(12500, "BRL"), in_minor_units(-5000, "BRL")
    (Decimal('0.01'), Decimal('-0.01'))
    """
    step = Decimal(1).scaleb(-MINOR_DIGITS.get(currency, 2))
    return from_cost_units(units, currency).quantize(step, ROUND_HALF_UP)


def revenue_share(revenue_minor: int, basis_points: int) -> int:
    """Cost units of a share of revenue in minor units: exact, as a cost unit is a
    ten-thousandth of a minor unit and a basis point a ten-thousandth of the whole.

    >>> revenue_share(19700, 3000)  # 30 % of R$ 197,00 is R$ 59,10
    59100000
    """
    return revenue_minor * basis_points


def cost_text(units: int, currency: str) -> str:
    """An amount as answers show it: in the minor unit, or finer where it is finer.

    >>> cost_text(12500, "BRL"), cost_text(5_000000, "BRL")
    ('0.0125', '5.00')
    """
    exact, shown = from_cost_units(units, currency), in_minor_units(units, currency)
    return str(shown if shown == exact else exact.normalize())


def click_cost(raw: str, currency: str) -> int | None:
    """The cost a click's URL gives (``?cost=0.05`` or ``0,05``) in cost units, rounded half up
    to one; None for anything else (a macro left unfilled, a negative, more than
    MAX_CLICK_COST), which is ignored: a bad value never stops the redirect.

    >>> click_cost("0,0125", "BRL"), click_cost("{cost}", "BRL"), click_cost("-1", "BRL")
    (12500, None, None)
    """
    if not _CLICK_COST.fullmatch(raw):
        return None
    amount = Decimal(raw.replace(",", "."))
    if amount > MAX_CLICK_COST:
        return None
    return int(amount.scaleb(_digits(currency)).to_integral_value(ROUND_HALF_UP))
