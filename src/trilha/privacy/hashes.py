"""The buyer's e-mail and phone as conversion APIs match on them: normalised, then SHA-256 (hex).

Meta's Conversions API and Google Ads' enhanced conversions both take an e-mail trimmed and
lower-cased, and a phone as its digits with the country code (E.164 without the "+").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from trilha.postbacks.payload import Tree, get_path
from trilha.privacy.buyer_fields import BuyerFields

DEFAULT_COUNTRY_CODE: Final = "55"  # Brazil: the platforms' buyers, unless the number says
_NOT_DIGIT: Final = re.compile(r"\D")


@dataclass(frozen=True, slots=True)
class BuyerHashes:
    email_sha256: str | None = None
    phone_sha256: str | None = None


NO_BUYER: Final = BuyerHashes()


def normalise_email(email: str) -> str | None:
    """Trimmed and lower-cased; None when it is no e-mail.

    >>> normalise_email("  Ana.Souza@Example.COM ")
    'ana.souza@example.com'
    """
    email = email.strip().lower()
    local, at, domain = email.partition("@")
    if not (at and local and "." in domain) or any(c.isspace() for c in email):
        return None
    return email


def normalise_phone(phone: str, *, country_code: str = DEFAULT_COUNTRY_CODE) -> str | None:
    """Digits with the country code; a number without one (area code and number) is taken as
    the default country's. None when it cannot be a full number.

    >>> normalise_phone("(11) 98765-4321"), normalise_phone("+55 11 98765-4321")
    ('5511987654321', '5511987654321')
    >>> normalise_phone("55 11987654321"), normalise_phone("+1 (415) 555-0100")
    ('5511987654321', '14155550100')
    """
    text = phone.strip()
    digits = _NOT_DIGIT.sub("", text)
    if text.startswith("+") or digits.startswith("00"):
        digits = digits.lstrip("0")
    elif digits.startswith("0"):  # a national trunk prefix: 0 11 98765-4321
        digits = digits[1:]
        if len(digits) in (10, 11):
            digits = country_code + digits
    elif len(digits) in (10, 11):
        digits = country_code + digits
    return digits if 11 <= len(digits) <= 15 else None


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def read_buyer_hashes(payload: Tree, fields: BuyerFields) -> BuyerHashes:
    """The hashes of the first e-mail and phone found at the buyer's fields."""
    email = _first(payload, fields.email, normalise_email)
    phone = _first(payload, fields.phone, normalise_phone)
    return BuyerHashes(
        email_sha256=sha256_hex(email) if email else None,
        phone_sha256=sha256_hex(phone) if phone else None,
    )


def _first(
    payload: Tree, paths: tuple[str, ...], normalise: Callable[[str], str | None]
) -> str | None:
    for path in paths:
        value = get_path(payload, path)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and (normalised := normalise(value)):
            return normalised
    return None
