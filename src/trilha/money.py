"""Exact money: amounts as Decimal in code, integer minor units plus an ISO 4217 code in storage."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from enum import StrEnum

# Active ISO 4217 codes (and the minor-unit digits of those that are not 2).
_CODES = (
    "AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP "
    "BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP "
    "GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR "
    "KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK "
    "MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR "
    "SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS "
    "UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWG"
)
CURRENCIES = frozenset(_CODES.split())
MINOR_DIGITS = {
    **dict.fromkeys(
        (
            "BIF",
            "CLP",
            "DJF",
            "GNF",
            "ISK",
            "JPY",
            "KMF",
            "KRW",
            "PYG",
            "RWF",
            "UGX",
            "UYI",
            "VND",
            "VUV",
            "XAF",
            "XOF",
            "XPF",
        ),
        0,
    ),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
}
# A single sale above this is far more likely a parsing mistake than a real amount.
MAX_AMOUNT = Decimal("10000000")
_CENT = Decimal("0.01")

_DECIMAL_DOT = re.compile(r"-?\d+(\.\d+)?")
_DECIMAL_COMMA = re.compile(r"-?\d+,\d+")
_THOUSANDS_DOT = re.compile(r"-?\d{1,3}(\.\d{3})+(,\d+)?")
_THOUSANDS_COMMA = re.compile(r"-?\d{1,3}(,\d{3})+(\.\d+)?")


class ValueUnit(StrEnum):
    DECIMAL = "decimal"
    CENTS = "cents"


class AmountError(ValueError):
    pass


def parse_amount(raw: object, unit: ValueUnit = ValueUnit.DECIMAL) -> Decimal:
    """Read an amount as platforms send it: 97, 97.00, 97,00, 1.234,56, 1,234.56, or cents.

    >>> parse_amount("1.234,56"), parse_amount("9700", ValueUnit.CENTS), parse_amount(97.5)
    (Decimal('1234.56'), Decimal('97.00'), Decimal('97.5'))
    """
    if isinstance(raw, bool) or raw is None:
        raise AmountError("no amount")
    if isinstance(raw, int | float):
        text = repr(raw) if isinstance(raw, float) else str(raw)
    else:
        text = str(raw).strip().removeprefix("R$").strip().replace(" ", "")
    amount = _parse_text(text)
    if unit is ValueUnit.CENTS:
        if amount != amount.to_integral_value():
            raise AmountError(f"{text!r} is not a whole number of cents")
        # scaleb, not a division: exact for any number of digits, where dividing rounds to
        # Decimal's 28 digits and the quantize that follows then fails.
        amount = amount.scaleb(-2)
    if amount < 0:
        raise AmountError(f"negative amount {text!r}")
    if amount > MAX_AMOUNT:
        raise AmountError(f"amount {text!r} is larger than {MAX_AMOUNT}")
    return amount.quantize(_CENT) if unit is ValueUnit.CENTS else amount


def _parse_text(text: str) -> Decimal:
    if _DECIMAL_DOT.fullmatch(text):
        normal = text
    elif _DECIMAL_COMMA.fullmatch(text):
        normal = text.replace(",", ".")
    elif _THOUSANDS_DOT.fullmatch(text):
        normal = text.replace(".", "").replace(",", ".")
    elif _THOUSANDS_COMMA.fullmatch(text):
        normal = text.replace(",", "")
    else:
        raise AmountError(f"{text[:40]!r} is not an amount")
    try:
        return Decimal(normal)
    except InvalidOperation:
        raise AmountError(f"{text[:40]!r} is not an amount") from None


def check_currency(code: str) -> str:
    code = code.strip().upper()
    if code not in CURRENCIES:
        raise AmountError(f"unknown currency {code[:8]!r}")
    return code


def to_minor(amount: Decimal, currency: str) -> int:
    """Integer minor units, refusing amounts finer than the currency allows.

    >>> to_minor(Decimal("1234.56"), "BRL"), to_minor(Decimal("500"), "JPY")
    (123456, 500)
    """
    digits = MINOR_DIGITS.get(currency, 2)
    scaled = amount.scaleb(digits)
    if scaled != scaled.to_integral_value():
        raise AmountError(f"{amount} has more than {digits} decimal places for {currency!r}")
    return int(scaled)


def rounded(amount: Decimal, currency: str) -> Decimal:
    """The amount in the currency's minor unit, as logs and answers show it.

    >>> rounded(Decimal("97.5"), "BRL"), rounded(Decimal("500"), "JPY")
    (Decimal('97.50'), Decimal('500'))
    """
    return amount.quantize(Decimal(1).scaleb(-MINOR_DIGITS.get(currency, 2)))


def from_minor(minor: int, currency: str) -> Decimal:
    return Decimal(minor).scaleb(-MINOR_DIGITS.get(currency, 2))
