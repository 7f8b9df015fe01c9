"""trilha's own log lines in pytest's caplog: the app's `trilha` logger does not propagate to
the root logger (trilha.logs), where caplog listens, so a test that reads trilha's lines
attaches caplog's handler to it."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def trilha_lines(caplog: pytest.LogCaptureFixture, level: int = logging.DEBUG) -> Iterator[None]:
    """Capture trilha's lines (and the root's) at ``level`` while the block runs."""
    logger = logging.getLogger("trilha")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(level), caplog.at_level(level, logger="trilha"):
            yield
    finally:
        logger.removeHandler(caplog.handler)
