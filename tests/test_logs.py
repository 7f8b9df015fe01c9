"""Log lines: JSON objects for collectors, or plain text for a terminal."""

from __future__ import annotations

import json
import logging

import pytest

from tests.logcapture import trilha_lines
from trilha.logs import configure_logging
from trilha.settings import Settings


def test_it_writes_one_json_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(Settings(log_format="json", log_level="info", _env_file=None))

    logging.getLogger("trilha.clicks").warning("batch of %d not stored", 3)

    line = json.loads(capsys.readouterr().err.strip())
    assert line["level"] == "warning"
    assert line["logger"] == "trilha.clicks"
    assert line["message"] == "batch of 3 not stored"


def test_it_writes_plain_lines_for_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(Settings(log_format="console", log_level="warning", _env_file=None))

    logging.getLogger("trilha").info("hidden below the level")
    logging.getLogger("trilha").error("shown")

    err = capsys.readouterr().err
    assert "hidden" not in err
    assert "ERROR trilha: shown" in err


def test_tests_read_trilhas_own_lines_though_its_logger_does_not_propagate(
    caplog: pytest.LogCaptureFixture,
) -> None:
    configure_logging(Settings(log_format="console", log_level="warning", _env_file=None))

    logging.getLogger("trilha.x").debug("unseen by caplog alone")
    with trilha_lines(caplog):
        logging.getLogger("trilha.clicks").debug("batch of %d not stored", 3)

    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        ("trilha.clicks", "batch of 3 not stored")
    ]
    assert logging.getLogger("trilha").propagate is False
