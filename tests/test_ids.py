"""Ids and their random characters."""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter, defaultdict
from itertools import count

import pytest

from trilha import ids


def test_every_random_character_is_equally_likely(monkeypatch: pytest.MonkeyPatch) -> None:
    # The system's random source, replaced by every byte value in turn, from 248 (4 * 62): the
    # first eight would make eight characters more likely than the others. One chunk of it
    # holds every byte value the same number of times.
    source = count(248)
    monkeypatch.setattr("os.urandom", lambda n: bytes(next(source) % 256 for _ in range(n)))
    monkeypatch.setattr(ids, "_random_chars", threading.local())  # nothing drawn before
    assert ids.RANDOM_CHUNK % 256 == 0

    drawn = ids.random_base62(ids.RANDOM_CHUNK // 256 * 248)

    assert Counter(drawn) == dict.fromkeys(ids.BASE62, ids.RANDOM_CHUNK // 64)


def test_ids_are_time_first_then_random() -> None:
    first, second = ids.new_id(), ids.new_id()
    click = ids.mint_click_id()

    assert len(first) == ids.ID_LENGTH
    assert len(click) == ids.CLICK_ID_LENGTH
    assert set(first + second + click) <= set(ids.BASE62)
    assert first[ids.CLICK_TIME_CHARS :] != second[ids.CLICK_TIME_CHARS :]
    assert first[: ids.CLICK_TIME_CHARS] <= second[: ids.CLICK_TIME_CHARS]


def test_draws_longer_than_a_chunk() -> None:
    drawn = ids.random_base62(3 * ids.RANDOM_CHUNK)

    assert len(drawn) == 3 * ids.RANDOM_CHUNK
    assert set(drawn) == set(ids.BASE62)


def test_threads_drawing_at_once_never_get_the_same_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every thread's characters come from the system's random bytes that thread read itself.
    threads, each = 8, 500
    reads: defaultdict[int, list[bytes]] = defaultdict(list)
    urandom = os.urandom

    def reading(n: int) -> bytes:
        data = urandom(n)
        reads[threading.get_ident()].append(data)
        return data

    monkeypatch.setattr("os.urandom", reading)
    drawn: dict[int, list[str]] = {}
    start = threading.Barrier(threads)

    def draw() -> None:
        start.wait()
        drawn[threading.get_ident()] = [
            ids.random_base62(ids.CLICK_RANDOM_CHARS) for _ in range(each)
        ]

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads interleave as often as they can
    try:
        workers = [threading.Thread(target=draw) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(switch)

    assert len(drawn) == threads
    for ident, chars in drawn.items():
        own = "".join(ids.BASE62[byte % 62] for byte in b"".join(reads[ident]) if byte < 248)
        assert own.startswith("".join(chars))
    every = [chars for chunk in drawn.values() for chars in chunk]
    assert len(set(every)) == len(every) == threads * each


@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")  # the test's other threads
def test_a_forked_child_draws_characters_of_its_own() -> None:
    ids.random_base62(1)  # the parent holds characters not handed out yet
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        try:
            os.close(read)
            os.write(write, ids.random_base62(100).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        child = pipe.read().decode()
    os.waitpid(pid, 0)

    assert len(child) == 100
    assert child != ids.random_base62(100)
