"""Checks on values users type, each raising InvalidInput with a message for the field."""

from __future__ import annotations

import re
from urllib.parse import urlsplit
from zoneinfo import available_timezones

from trilha.errors import InvalidInput
from trilha.macros import holds_origin_macro

SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
HOST = re.compile(r"(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
CURRENCY = re.compile(r"[A-Z]{3}")
EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]+\.[^@\s]+")
MIN_PASSWORD = 10
PASSWORD_MAX = 1024
MAX_URL = 4096
NAME_MAX = 120  # names of workspaces, sources, merchants, API keys, users
TEXT_MAX = 200
TIMEZONES = frozenset(available_timezones())
NOT_TEXT = (
    "a string holds a NUL character or a lone UTF-16 surrogate (an escape such as \\u0000 or "
    "\\ud800), which is not text"
)


def is_text(value: object) -> bool:
    """False when a string in ``value`` (a JSON value: names and items too) holds a NUL or
    cannot be UTF-8: JSON's ``\\u0000`` and ``\\ud800`` escapes decode to such strings, which
    no database can store (PostgreSQL refuses NUL in text)."""
    if isinstance(value, str):
        if "\x00" in value:
            return False
        if value.isascii():
            return True
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(is_text(name) and is_text(item) for name, item in value.items())
    if isinstance(value, list):
        return all(is_text(item) for item in value)
    return True


def require_text(value: str, field: str, *, max_length: int = TEXT_MAX) -> str:
    value = value.strip()
    if not value:
        raise InvalidInput({field: "must not be empty"})
    if len(value) > max_length:
        raise InvalidInput({field: f"must be at most {max_length} characters"})
    return value


def require_http_url(value: str, field: str) -> str:
    """An absolute http(s) URL with a host; macros such as {click_id} are allowed anywhere.

    >>> require_http_url(" https://pay.example.com/c?src={click_id} ", "offer_url")
    'https://pay.example.com/c?src={click_id}'
    """
    value = value.strip()
    if len(value) > MAX_URL:
        raise InvalidInput({field: f"must be at most {MAX_URL} characters"})
    if any(ch.isspace() or ord(ch) < 32 for ch in value):
        raise InvalidInput({field: "must not contain spaces or control characters"})
    try:
        parts = urlsplit(value)
    except ValueError as exc:
        raise InvalidInput({field: f"is not a valid URL ({exc})"}) from None
    if parts.scheme.lower() not in ("http", "https"):
        raise InvalidInput({field: "must start with http:// or https://"})
    if not parts.netloc or not parts.hostname:
        raise InvalidInput({field: "must include a host, as in https://pay.example.com/..."})
    return value


def require_url_template(value: str, field: str) -> str:
    """An http(s) URL whose macros all stand after the host, so none chooses where it leads.

    >>> require_url_template("https://{sub1}.example/x", "offer_url")
    Traceback (most recent call last):
    ...
    trilha.errors.InvalidInput: offer_url: the host may not hold a macro (nor the user or port)
    """
    value = require_http_url(value, field)
    if holds_origin_macro(value):
        raise InvalidInput({field: "the host may not hold a macro (nor the user or port)"})
    return value


def optional_http_url(value: str | None, field: str) -> str | None:
    if value is None or not value.strip():
        return None
    return require_http_url(value, field)


def require_slug(value: str, field: str = "slug") -> str:
    value = value.strip().lower()
    if not SLUG.fullmatch(value):
        raise InvalidInput(
            {
                field: "use 1 to 64 lower-case letters, digits, '-' or '_', "
                "starting with a letter or digit"
            }
        )
    return value


def require_host(value: str, field: str = "host") -> str:
    value = value.strip().lower().rstrip(".")
    if not HOST.fullmatch(value):
        raise InvalidInput(
            {field: "must be a domain name such as track.example.com, without scheme or path"}
        )
    return value


def require_timezone(value: str, field: str = "timezone") -> str:
    if value not in TIMEZONES:
        raise InvalidInput(
            {field: f"unknown time zone {value!r}; use an IANA name such as America/Sao_Paulo"}
        )
    return value


def require_currency(value: str, field: str = "currency") -> str:
    value = value.strip().upper()
    if not CURRENCY.fullmatch(value):
        raise InvalidInput({field: "must be a three-letter ISO 4217 code such as BRL or USD"})
    return value


def require_email(value: str, field: str = "email") -> str:
    value = value.strip().lower()
    if len(value) > 254 or not EMAIL.fullmatch(value):
        raise InvalidInput({field: "is not a valid e-mail address"})
    return value


def require_password(value: str, field: str = "password") -> str:
    if len(value) < MIN_PASSWORD:
        raise InvalidInput({field: f"must be at least {MIN_PASSWORD} characters"})
    if len(value) > PASSWORD_MAX:
        raise InvalidInput({field: f"must be at most {PASSWORD_MAX} characters"})
    return value
