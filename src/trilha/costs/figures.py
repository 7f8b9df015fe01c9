"""Numbers as a cost CSV holds them (pure): ASCII digits only, and a lone ``.`` or ``,`` before
exactly three digits (``1.234``) read as the rest of the file settles it, never guessed.

``1.234`` may be a thousand and more (a dot groups thousands in Brazil) or one and a bit (a dot
marks decimals elsewhere). The file settles it when its other numbers show which mark it writes
decimals with: a cost with both marks (``1.234,56``, ``1,234.56``), a mark before other than
three digits (``12,50``, ``0.125``) or a grouped impressions count (``25.000``). When they do
not, or disagree, the cell is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

DecimalMark = Literal[".", ","]

_GROUPED = re.compile(r"[0-9]{1,3}([.,])[0-9]{3}(?:\1[0-9]{3})*")
_AMBIGUOUS = re.compile(r"[1-9][0-9]{0,2}([.,])[0-9]{3}")


def check_ascii(text: str) -> str:
    """The text, if every digit in it is one of 0 to 9 (``int`` and ``Decimal`` take others).

    >>> check_ascii("1.234,56")
    '1.234,56'
    """
    if any(c.isdigit() and not c.isascii() for c in text):
        raise ValueError(f"{text[:20]!r} is not a number written with the digits 0 to 9")
    return text


def bare_cost(text: str) -> str:
    """A cost without the ``R$`` and spaces that ``parse_amount`` also leaves out.

    >>> bare_cost("R$ 1 234,56")
    '1234,56'
    """
    return check_ascii(text).removeprefix("R$").strip().replace(" ", "")


def cost_mark(text: str) -> DecimalMark | None:
    """The decimal mark a cost shows, or None when it shows none (``310``, ``1.234``).

    >>> cost_mark("1.234,56"), cost_mark("12.5"), cost_mark("1.234.567"), cost_mark("1,234")
    (',', '.', ',', None)
    """
    dots, commas = text.count("."), text.count(",")
    if dots and commas:
        return "." if text.rfind(".") > text.rfind(",") else ","
    if dots > 1 or commas > 1:
        return "," if dots else "."
    if (dots or commas) and not _AMBIGUOUS.fullmatch(text.lstrip("-")):
        return "." if dots else ","
    return None


def impressions_mark(text: str) -> DecimalMark | None:
    """The decimal mark a grouped impressions count implies: the other one.

    >>> impressions_mark("25.000"), impressions_mark("25000")
    (',', None)
    """
    grouped = _GROUPED.fullmatch(text)
    if grouped is None:
        return None
    return "," if grouped.group(1) == "." else "."


def settled_mark(marks: Iterable[DecimalMark | None]) -> DecimalMark | None:
    """The one decimal mark the file's numbers agree on; None if they show none or disagree.

    >>> settled_mark([None, ",", ","]), settled_mark([",", "."])
    (',', None)
    """
    shown = {mark for mark in marks if mark is not None}
    return shown.pop() if len(shown) == 1 else None


def plain_cost(text: str, mark: DecimalMark | None) -> str:
    """The cost as ``parse_amount`` reads it: an ambiguous ``1.234`` made plain by the file's
    decimal mark, or refused when the file has none.

    >>> plain_cost("1.234", ","), plain_cost("1.234", "."), plain_cost("12,50", None)
    ('1234', '1.234', '12,50')
    """
    ambiguous = _AMBIGUOUS.fullmatch(text)
    if ambiguous is None:
        return text
    separator, whole = ambiguous.group(1), text.replace(ambiguous.group(1), "")
    if mark is None:
        raise ValueError(
            f"{text!r} is ambiguous: write {whole} if it is {whole}, or {text}0 if the "
            f"{separator!r} marks decimals"
        )
    return text.replace(",", ".") if separator == mark else whole


def whole_number(text: str) -> int:
    """A count written plain or grouped by thousands (``25000``, ``25.000``, ``25,000``).

    >>> whole_number("25.000"), whole_number("7")
    (25000, 7)
    """
    if text.isascii() and text.isdigit():
        return int(text)
    grouped = _GROUPED.fullmatch(text)
    if grouped is None:
        raise ValueError(f"{text[:20]!r} is not a whole number")
    return int(text.replace(grouped.group(1), ""))
