"""Properties of amounts as platforms send them: parse_amount raises nothing but AmountError,
answers only amounts from 0 to MAX_AMOUNT, and reads back what the dashboard writes."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import example, given
from hypothesis import strategies as st

from trilha.i18n import translator
from trilha.money import (
    MAX_AMOUNT,
    MINOR_DIGITS,
    AmountError,
    ValueUnit,
    from_minor,
    parse_amount,
    to_minor,
)

CURRENCY = st.sampled_from(["BRL", "USD", "JPY", "KWD", "EUR"])
NUMBERISH = st.text(st.sampled_from("0123456789.,- R$"), max_size=40)
ANY_RAW = (
    NUMBERISH
    | st.text(max_size=40)
    | st.integers()
    | st.floats()
    | st.decimals(allow_nan=False).map(str)
    | st.text("9", min_size=25, max_size=400)
    | st.none()
    | st.booleans()
)
CENTS = st.decimals(min_value=0, max_value=MAX_AMOUNT, places=2)


@given(ANY_RAW, st.sampled_from(ValueUnit))
@example("9" * 40, ValueUnit.CENTS)  # more digits than Decimal's precision once divided by 100
@example("1" * 29, ValueUnit.CENTS)
def test_it_reads_any_amount_or_says_why_not(raw: object, unit: ValueUnit) -> None:
    try:
        amount = parse_amount(raw, unit)
    except AmountError:
        return
    assert isinstance(amount, Decimal)
    assert 0 <= amount <= MAX_AMOUNT


@given(CENTS, st.sampled_from(["pt-BR", "en"]), st.booleans())
def test_it_reads_back_an_amount_as_the_dashboard_writes_it(
    amount: Decimal, locale: str, with_symbol: bool
) -> None:
    written = translator(locale).money(amount, "BRL") if with_symbol else None
    number = translator(locale).number(amount, 2)

    assert parse_amount(number) == amount
    if written is not None and locale == "pt-BR":
        assert parse_amount(written) == amount


@given(CENTS)
def test_it_reads_back_an_amount_sent_in_cents(amount: Decimal) -> None:
    assert parse_amount(str(int(amount * 100)), ValueUnit.CENTS) == amount
    assert parse_amount(int(amount * 100), ValueUnit.CENTS) == amount


@given(st.integers(min_value=0, max_value=10**12), CURRENCY)
def test_it_stores_minor_units_and_reads_them_back(minor: int, currency: str) -> None:
    assert to_minor(from_minor(minor, currency), currency) == minor


@given(st.decimals(min_value=0, max_value=MAX_AMOUNT, places=4), CURRENCY)
def test_it_refuses_amounts_finer_than_the_currency_allows(amount: Decimal, currency: str) -> None:
    digits = MINOR_DIGITS.get(currency, 2)
    try:
        minor = to_minor(amount, currency)
    except AmountError:
        assert amount != amount.quantize(Decimal(1).scaleb(-digits))
        return
    assert from_minor(minor, currency) == amount
