"""Ids and their random characters."""

from __future__ import annotations

from collections import Counter
from itertools import count

import pytest

from trilha import ids


def test_every_random_character_is_equally_likely(monkeypatch: pytest.MonkeyPatch) -> None:
    # The system's random source, replaced by every byte value in turn, from 248 (4 * 62): the
    # first eight would make eight characters more likely than the others.
    source = count(248)
    monkeypatch.setattr("os.urandom", lambda n: bytes(next(source) % 256 for _ in range(n)))

    drawn = ids.random_base62(248)

    assert Counter(drawn) == dict.fromkeys(ids.BASE62, 4)


def test_ids_are_time_first_then_random() -> None:
    first, second = ids.new_id(), ids.new_id()
    click = ids.mint_click_id()

    assert len(first) == ids.ID_LENGTH
    assert len(click) == ids.CLICK_ID_LENGTH
    assert set(first + second + click) <= set(ids.BASE62)
    assert first[ids.CLICK_TIME_CHARS :] != second[ids.CLICK_TIME_CHARS :]
    assert first[: ids.CLICK_TIME_CHARS] <= second[: ids.CLICK_TIME_CHARS]
