"""Replay: run stored `invalid` or `orphan` requests through the pipeline again, after a fix.

The same dedupe applies, so a replay can never count a conversion twice. Each replay is a new
log entry pointing at the original, which stays as it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.outcome import Outcome
from trilha.errors import InvalidInput, NotFound
from trilha.postbacks.log import get_log_entry, raw_from_log
from trilha.postbacks.payload import parse_request
from trilha.postbacks.receive import Replay, receive_postback
from trilha.postbacks.result import Result

REPLAYABLE = (Outcome.INVALID.value, Outcome.ORPHAN.value)
MAX_REPLAY = 500


async def replay_postbacks(
    conn: AsyncConnection, workspace_id: str, entry_ids: Sequence[str], *, now: datetime
) -> list[Result]:
    if not entry_ids or len(entry_ids) > MAX_REPLAY:
        raise InvalidInput({"ids": f"give 1 to {MAX_REPLAY} log entry ids"})
    results = []
    for entry_id in entry_ids:
        entry = await get_log_entry(conn, workspace_id, entry_id)
        if entry is None:
            raise NotFound(f"postback log entry '{entry_id[:40]}' not found")
        refusal = replay_refusal(entry)
        if refusal is not None:
            raise InvalidInput({"ids": f"{entry_id}: {refusal}"})
        received = await parse_request(raw_from_log(entry, received_at=now))
        replay = Replay(workspace_id=workspace_id, log_id=entry_id)
        results.append(await conn.run_sync(receive_postback, received, replay=replay))
    return results


def replay_refusal(entry: Mapping[str, Any]) -> str | None:
    """Why a log entry cannot be replayed, or None when it can."""
    if entry["outcome"] not in REPLAYABLE:
        return "only invalid or orphan entries can be replayed"
    if entry["auth_failed"]:
        return "it failed the merchant's secret check"
    if entry.get("payload_purged_at") is not None:
        return "its payload was purged (retention, or a forgotten buyer)"
    if entry["body_truncated"]:
        return "its body was too large to keep whole"
    return None
