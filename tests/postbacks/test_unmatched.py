"""Postbacks that match no workspace are counted per source and hour, a few sampled cut short
with their secrets masked, never stored whole; the operator sees them with `trilha postbacks
unmatched` and in the server log, and the maintenance loop trims them."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_workspace
from tests.logcapture import trilha_lines
from trilha.app import TrilhaApp
from trilha.db.schema import postback_log, unmatched_postbacks, unmatched_samples
from trilha.maintenance import report_unmatched
from trilha.postbacks import unmatched
from trilha.postbacks.log import MASK

HOTTOK = "Hk7-flood-hottok-Zq3vT8mWb1LkP6x"
PADDING = 200 * 1024


def flood_body(n: int) -> bytes:
    return json.dumps({"hottok": HOTTOK, "n": n, "pad": "x" * PADDING}).encode()


async def test_a_token_less_flood_is_counted_and_sampled_never_stored_whole(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    await make_workspace(db)
    guesses = [f"guess-{n:03d}-aB3dE6gH9" for n in range(50)]

    answers = [
        await client.post(
            "/postback",
            params={"token": guess, "click_id": "c1"},
            content=flood_body(n),
            headers={"content-type": "application/json", "x-hotmart-hottok": HOTTOK},
        )
        for n, guess in enumerate(guesses)
    ]

    assert {(a.status_code, a.json()["status"], a.json()["reason"]) for a in answers} == {
        (401, "invalid", "unknown token")
    }
    assert "postback_id" not in answers[0].json()
    assert await fetch_all(db, postback_log) == []
    [counter] = await fetch_all(db, unmatched_postbacks)
    assert (counter["source"], counter["requests"], counter["sampled"]) == (
        "198.51.100.23",
        50,
        True,
    )
    samples = await fetch_all(db, unmatched_samples)
    assert len(samples) == unmatched.SAMPLES_PER_SOURCE
    stored = json.dumps(samples, default=str)
    assert len(stored) < unmatched.SAMPLES_PER_SOURCE * 6 * 1024
    for sample in samples:
        assert sample["body_bytes"] == len(flood_body(0))
        assert len(sample["body"]) == unmatched.SAMPLE_BODY
        assert sample["body"].startswith(f'{{"hottok": "{MASK}", "n": ')
        assert sample["query"] == f"token={MASK}&click_id=c1"
        assert ["x-hotmart-hottok", MASK] in sample["headers"]
        assert sample["reason"] == "unknown token"
    assert HOTTOK not in stored
    assert not any(guess in stored for guess in guesses)


@pytest.mark.parametrize(
    ("params", "host", "reason"),
    [
        ({}, "testserver", "no workspace token, and the host is no custom tracking domain"),
        ({}, "track.unknown.example", "no workspace token"),
        ({"token": "{token}"}, "testserver", "unknown token"),
    ],
)
async def test_every_request_without_a_workspace_is_counted_with_the_same_answer(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    params: dict[str, str],
    host: str,
    reason: str,
) -> None:
    response = await client.get("/pb", params={**params, "click_id": "c1"}, headers={"host": host})

    assert response.status_code == 401
    assert reason in response.json()["reason"]
    assert await fetch_all(db, postback_log) == []
    [counter] = await fetch_all(db, unmatched_postbacks)
    assert counter["requests"] == 1
    [sample] = await fetch_all(db, unmatched_samples)
    assert (sample["host"], sample["reason"]) == (host, response.json()["reason"])


async def test_samples_are_kept_for_the_first_sources_of_an_hour_only(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    sources = [f"203.0.113.{n}" for n in range(1, unmatched.SAMPLED_SOURCES + 3)]
    for ip in sources:
        transport = httpx.ASGITransport(app=app, client=(ip, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            assert (await c.get("/pb", params={"click_id": "c"})).status_code == 401

    counters = await fetch_all(db, unmatched_postbacks)
    assert sorted(c["source"] for c in counters) == sorted(sources)
    sampled = {s["source"] for s in await fetch_all(db, unmatched_samples)}
    assert len(sampled) == unmatched.SAMPLED_SOURCES


async def test_sources_past_the_hourly_cap_are_counted_together(
    app: TrilhaApp, db: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(unmatched, "MAX_SOURCES", 3)
    sources = ["203.0.113.1", "203.0.113.2", "2001:db8:7:1::5", "2001:db8:7:1::6", "203.0.113.9"]
    for ip in [*sources, sources[0]]:
        transport = httpx.ASGITransport(app=app, client=(ip, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            await c.get("/pb", params={"click_id": "c"})

    counts = {c["source"]: c["requests"] for c in await fetch_all(db, unmatched_postbacks)}
    assert counts == {
        "203.0.113.1": 2,
        "203.0.113.2": 1,
        "2001:db8:7:1::/64": 2,
        unmatched.OTHER_SOURCES: 1,
    }


async def test_a_matched_postback_is_logged_as_before(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)

    response = await client.get(
        "/pb", params={"token": workspace.postback_token, "click_id": "nope", "txid": "T1"}
    )

    assert response.json()["status"] == "orphan"
    [entry] = await fetch_all(db, postback_log)
    assert entry["workspace_id"] == workspace.id
    assert await fetch_all(db, unmatched_postbacks) == []


async def test_the_maintenance_loop_trims_old_counts_and_logs_the_last_hour(
    client: httpx.AsyncClient, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    for token in ("old-guess-1234567", "new-guess-1234567"):
        await client.get("/pb", params={"token": token, "click_id": "c"})
    long_ago = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=4)
    async with db.begin() as conn:
        for table in (unmatched_postbacks, unmatched_samples):
            await conn.execute(
                update(table)
                .where(table.c.hour < long_ago + timedelta(days=5))
                .values(hour=long_ago)
            )
    async with db.begin() as conn:  # the second request is recent again
        await conn.execute(
            unmatched_postbacks.insert().values(
                hour=long_ago + timedelta(days=4),
                source="192.0.2.8",
                requests=7,
                sampled=False,
                first_at=datetime.now(UTC),
                last_at=datetime.now(UTC),
            )
        )
    with trilha_lines(caplog, logging.INFO):
        async with db.begin() as conn:
            await report_unmatched(conn, retention=timedelta(hours=72))

    assert [c["source"] for c in await fetch_all(db, unmatched_postbacks)] == ["192.0.2.8"]
    assert await fetch_all(db, unmatched_samples) == []
    [line] = [r.getMessage() for r in caplog.records if r.name == "trilha.maintenance"]
    assert "7 postbacks matched no workspace in the last hour (sources: 1; most: " in line
    assert "192.0.2.8 (7)" in line


async def test_the_operator_lists_them_with_the_cli(
    client: httpx.AsyncClient, db: AsyncEngine, database_url: str
) -> None:
    for n in range(4):
        await client.post(
            "/postback",
            params={"token": "op-guess-7Hq2Lm9Xz"},
            content=flood_body(n),
            headers={"content-type": "application/json"},
        )

    # A server's write transaction is open meanwhile: the listing only reads, so it must not
    # wait for the write lock. The event loop stays free for the app's own tasks.
    async with db.begin() as conn:
        await conn.execute(
            update(unmatched_postbacks).values(requests=unmatched_postbacks.c.requests)
        )
        result = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "trilha", "postbacks", "unmatched", "--hours", "2"],
            env={**os.environ, "TRILHA_DATABASE_URL": database_url, "COLUMNS": "200"},
            text=True,
            capture_output=True,
            timeout=60,
            check=False,
        )

    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "4 postbacks matched no workspace in the last 2 hours." in out
    [counts] = [line for line in out.splitlines() if line.startswith("198.51.100.23 ")]
    assert counts.split()[1] == "4"
    assert out.count("POST /postback") == unmatched.SAMPLES_PER_SOURCE
    assert f"query: token={MASK}" in out
    assert f"body ({len(flood_body(0))} bytes (cut)): " in out
    assert "op-guess-7Hq2Lm9Xz" not in out
    assert HOTTOK not in out
