"""Opening a SQLite file: a refusal SQLite gives at once while another connection builds or
cleans up the WAL index is tried again for a second; a lock held for good is told after one
busy wait, not after a second of them."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from trilha.db.engine import WAL_OPEN_SECONDS, _open_wal

BUSY_TIMEOUT = 0.3


def test_a_file_locked_for_good_is_told_after_one_busy_wait(tmp_path: Path) -> None:
    path = tmp_path / "locked.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("PRAGMA journal_mode=WAL")
    holder.execute("CREATE TABLE t (x)")  # the exclusive lock is held from here on
    opener = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT)
    started = time.monotonic()
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            _open_wal(opener.cursor())
        waited = time.monotonic() - started
    finally:
        opener.close()
        holder.close()

    assert BUSY_TIMEOUT <= waited < WAL_OPEN_SECONDS


def test_a_file_no_one_holds_opens_in_wal_mode(tmp_path: Path) -> None:
    opener = sqlite3.connect(tmp_path / "free.db", isolation_level=None)
    try:
        cursor = opener.cursor()
        _open_wal(cursor)
        assert cursor.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        opener.close()
