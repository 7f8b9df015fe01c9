"""The short fault run: three SIGKILLs under load lose nothing acknowledged and count nothing twice.

The full run is `python -m tests.faults --kills 20` (docs/guarantees.md).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from tests.faults.harness import ACKNOWLEDGED_SHARE, run_faults

KILLS = 3
# One worker: each restart then takes half as long. The full run uses two, and
# test_workers.py covers several processes writing at once.
WORKERS = 1


async def test_nothing_acknowledged_is_lost_or_counted_twice_across_server_kills(
    database_url: str, tmp_path: Path
) -> None:
    seed = int(os.environ.get("TRILHA_FAULTS_SEED") or random.randrange(2**32))
    said: list[str] = []

    report = await run_faults(
        database_url, tmp_path, kills=KILLS, seed=seed, workers=WORKERS, say=said.append
    )

    story = "\n".join(said + report.lines())  # the seed and the kill moments, to replay a failure
    assert report.kills == KILLS, story
    assert report.clicks_acknowledged_share >= ACKNOWLEDGED_SHARE, story
    assert report.postbacks_acknowledged_share >= ACKNOWLEDGED_SHARE, story
    assert report.clicks_stored == report.clicks_acknowledged, story
    assert report.clicks_in_database <= report.clicks_sent, story
    assert report.postbacks_stored == report.postbacks_acknowledged, story
    assert report.duplicates == 0, story
    assert report.rollups_off == 0, story
