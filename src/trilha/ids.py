"""Random identifiers and secrets, and the one-way hash secrets are stored under."""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
import time
from contextlib import suppress
from datetime import datetime, timedelta
from functools import lru_cache

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
CLICK_TIME_CHARS = 9  # 62**9 ms ≈ 430 000 years
CLICK_RANDOM_CHARS = 14  # 62**14 > 2**83: more than 80 random bits
CLICK_ID_LENGTH = CLICK_TIME_CHARS + CLICK_RANDOM_CHARS
ID_LENGTH = 22
RANDOM_ID_CHARS = ID_LENGTH - CLICK_TIME_CHARS  # 62**13 > 2**77
# Random characters from the system's random source, a byte each: a byte below 248 (4 * 62)
# maps to one of the 62 characters, each as likely as any other; bytes from 248 up are dropped.
_BYTE_TO_BASE62 = bytes(BASE62.encode("ascii")[byte % 62] for byte in range(256))
_UNEVEN_BYTES = bytes(range(4 * 62, 256))
_BASE62_PAIRS = tuple(high + low for high in BASE62 for low in BASE62)


def to_base62(number: int, width: int) -> str:
    """Fixed-width base62; ASCII order of the result is numeric order.

    >>> to_base62(61, 3)
    '00z'
    """
    chunks = []
    for _ in range(width // 2):  # two digits a step: half the divisions
        number, rest = divmod(number, 62 * 62)
        chunks.append(_BASE62_PAIRS[rest])
    if width % 2:
        number, rest = divmod(number, 62)
        chunks.append(BASE62[rest])
    if number:
        raise ValueError("number does not fit the width")
    return "".join(reversed(chunks))


@lru_cache(maxsize=16)
def _time_part(millis: int) -> str:
    # The rows of one batch share a few milliseconds.
    return to_base62(millis, CLICK_TIME_CHARS)


# Random characters are drawn from the system in chunks of this many bytes, each thread's kept
# for it alone: one read of the random source serves some 70 click ids instead of one. A
# thread's characters not handed out yet are its ``chars`` from ``at`` on.
RANDOM_CHUNK = 1024
_random_chars = threading.local()


def _forget_random_chars() -> None:
    """In a forked child (its one thread, the one that forked): the parent's characters not
    handed out yet are the parent's to hand out, so the child draws its own."""
    _random_chars.chars = ""
    _random_chars.at = 0


os.register_at_fork(after_in_child=_forget_random_chars)


def random_base62(length: int) -> str:
    """``length`` uniform, independent [0-9A-Za-z] characters (5.95 random bits each), never
    handed to another thread or process.

    >>> len(random_base62(14)), set(random_base62(5000)) <= set(BASE62)
    (14, True)
    """
    mine = _random_chars
    try:
        chars: str = mine.chars
        start: int = mine.at
    except AttributeError:  # the thread's first draw
        chars, start = "", 0
    end = start + length
    if end > len(chars):
        chars = chars[start:]
        while len(chars) < length:
            chunk = os.urandom(RANDOM_CHUNK).translate(_BYTE_TO_BASE62, _UNEVEN_BYTES)
            chars += chunk.decode("ascii")
        mine.chars, start, end = chars, 0, length
    mine.at = end
    return chars[start:end]


def mint_click_id(at: datetime | None = None) -> str:
    """A 23-character [0-9A-Za-z] id: the click's millisecond, then 83 random bits.

    Time first keeps new ids at the end of the primary-key index.
    """
    millis = time.time_ns() // 1_000_000 if at is None else int(at.timestamp() * 1000)
    return _time_part(millis) + random_base62(CLICK_RANDOM_CHARS)


def click_ids_from(at: datetime) -> str:
    """The least click id minted at ``at`` or later: ids of earlier clicks sort below it.

    >>> from datetime import UTC
    >>> click_ids_from(datetime(1970, 1, 1, 0, 0, 0, 61000, tzinfo=UTC))
    '00000000z'
    """
    return _time_part(int(at.timestamp() * 1000))


def click_id_window(
    since: datetime | None, until: datetime | None
) -> tuple[str | None, str | None]:
    """The ids of the clicks made from ``since`` to before ``until``: at least the first, below
    the second. None where the ids cannot say (no time, a time before 1970, the last
    millisecond of 9999); a click made in ``until``'s own millisecond, before it, sorts below.

    >>> from datetime import UTC
    >>> click_id_window(datetime(1970, 1, 1, 0, 0, 0, 61000, tzinfo=UTC), None)
    ('00000000z', None)
    """
    low = high = None
    if since is not None:
        with suppress(ValueError, OverflowError):
            low = click_ids_from(since)
    if until is not None:
        with suppress(ValueError, OverflowError):
            high = click_ids_from(until + timedelta(milliseconds=1))
    return low, high


def new_id() -> str:
    """A 22-character [0-9A-Za-z] id for rows that appear in URLs: the millisecond, then 77
    random bits, so that it cannot be guessed.

    Time first, as for click ids: each new row lands at the end of its table's key index instead
    of on a random page, which on SQLite is a page fewer written per row and index.
    """
    return _time_part(time.time_ns() // 1_000_000) + random_base62(RANDOM_ID_CHARS)


def new_secret(prefix: str = "") -> str:
    """A 256-bit secret for tokens and keys, URL-safe."""
    return prefix + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """SHA-256 of a high-entropy secret; enough for random tokens (not for passwords)."""
    return hashlib.sha256(secret.encode()).hexdigest()
