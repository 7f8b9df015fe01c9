"""A batch of postbacks is stored in one transaction, its log and history rows inserted together
at its end; one postback whose row the database refuses costs no other its sale."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_workspace
from tests.logcapture import trilha_lines
from tests.postbacks.test_receive import click_on
from tests.refusals import refuse_inserts
from trilha.db.schema import conversion_status_history, conversions, postback_log

SALES = 30


async def test_a_refused_log_entry_fails_its_postback_alone(
    client: httpx.AsyncClient, db: AsyncEngine, caplog: pytest.LogCaptureFixture
) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    # The log entry is among the rows inserted at the batch's end.
    await refuse_inserts(db, "postback_log", when="NEW.txid = 'poison'")
    txids = [f"T{n}" for n in range(SALES)]
    txids.insert(5, "poison")
    txids.insert(17, "poison")

    with trilha_lines(caplog, logging.WARNING):
        answers = await asyncio.gather(
            *(
                client.get(
                    "/postback",
                    params={
                        "token": workspace.postback_token,
                        "click_id": click_id,
                        "txid": txid,
                        "value": "10",
                    },
                )
                for txid in txids
            )
        )

    statuses = Counter(a.status_code for t, a in zip(txids, answers, strict=True) if t != "poison")
    assert statuses == {200: SALES}
    assert [a.status_code for t, a in zip(txids, answers, strict=True) if t == "poison"] == [
        503
    ] * 2
    stored = await fetch_all(db, conversions)
    assert sorted(c["txid"] for c in stored) == sorted(f"T{n}" for n in range(SALES))
    assert len(await fetch_all(db, conversion_status_history)) == SALES
    logged = [e["txid"] for e in await fetch_all(db, postback_log)]
    assert sorted(logged) == sorted(f"T{n}" for n in range(SALES))
    assert "storing its postbacks one by one" in caplog.text
