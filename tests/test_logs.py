"""Log lines: JSON objects for collectors, or plain text for a terminal."""

from __future__ import annotations

import json
import logging
import os
import signal
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign, make_workspace
from tests.logcapture import trilha_lines
from tests.test_serve import trilha_serve
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
    assert "[error" in err
    assert "shown" in err
    assert "[trilha]" in err


def test_it_writes_json_when_the_output_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging(Settings(log_level="info", _env_file=None))  # pytest's stderr: no terminal

    logging.getLogger("trilha.clicks").info("stored")

    assert json.loads(capsys.readouterr().err.strip())["message"] == "stored"


async def test_the_access_log_names_each_request_and_nothing_secret(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace = await make_workspace(db)
    campaign = await make_campaign(db, workspace, slug="canary-slug-4f1c")
    email = "canary-buyer-91d2@example.com"

    with trilha_serve(database_url, tmp_path, access_log="true") as (base, process):
        click = httpx.get(f"{base}/r/{campaign.slug}", params={"sub1": email})
        [click_id] = parse_qs(urlsplit(click.headers["location"]).query)["src"]
        sale = httpx.get(
            f"{base}/pb",
            params={
                "token": workspace.postback_token,
                "click_id": click_id,
                "txid": "T1",
                "value": "97",
                "email": email,
            },
        )
        httpx.get(f"{base}/api/v1/workspaces/{workspace.id}/reports")
        os.killpg(process.pid, signal.SIGTERM)
        output, _ = process.communicate(timeout=10)

    assert (click.status_code, sale.status_code) == (302, 200)
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    access = [
        line
        for line in lines
        if line["logger"] == "trilha.access" and "health" not in line["route"]
    ]
    assert [(a["method"], a["route"], a["status"]) for a in access] == [
        ("GET", "/r/{slug}", 302),
        ("GET", "/pb", 200),
        ("GET", "/api/v1/workspaces/{workspace_id}/reports", 401),
    ]
    assert access[2]["workspace"] == workspace.id
    assert all(len(a["request_id"]) == 16 and a["ms"] >= 0 for a in access)
    assert len({a["request_id"] for a in access}) == 3
    for secret in (workspace.postback_token, email, campaign.slug, click_id, "token="):
        assert secret not in output


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
