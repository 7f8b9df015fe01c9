"""A batch's rollup sums, all read in one pass over its rows, equal each rollup's own count."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from trilha.reports.rollups import _PROJECTIONS, ROLLUPS, _finest_sums, _project


def _counted_alone(rows: list[dict[str, Any]], seconds: int, dimensions: tuple[str, ...]) -> Any:
    sums: dict[tuple[Any, ...], list[int]] = {}
    for row in rows:
        key = (
            row["workspace_id"],
            int(row["created_at"].timestamp()) // seconds,
            *[row.get(name) or "" for name in dimensions],
        )
        counts = sums.setdefault(key, [0, 0, 0])
        counts[0] += 1
        counts[1] += bool(row["is_unique"])
        counts[2] += bool(row["is_bot"])
    return sums


def test_every_rollup_sums_a_batch_as_counted_on_its_own() -> None:
    rng = random.Random(29)
    start = datetime(2026, 3, 1, 22, 30, tzinfo=UTC)
    rows = []
    for _ in range(3000):
        row: dict[str, Any] = {
            "workspace_id": rng.choice(["w1", "w2"]),
            "campaign_id": rng.choice(["c1", "c2", "c3"]),
            # Over midnight UTC, and before 1970 (a negative slot).
            "created_at": rng.choice([start, datetime(1969, 12, 31, 23, 59, tzinfo=UTC)])
            + timedelta(seconds=rng.randrange(0, 3 * 3600)),
            "is_unique": rng.random() < 0.5,
            "is_bot": rng.random() < 0.2,
        }
        if rng.random() < 0.7:
            row["source_id"] = rng.choice([None, "s1", "s2"])
        if rng.random() < 0.7:
            row["sub1"] = rng.choice([None, "", "a", "b"])
        rows.append(row)
    assert [rollup for rollup, _ in _PROJECTIONS] == list(ROLLUPS)
    for batch in (rows, rows[:1], rows[:40]):
        finest = _finest_sums(batch)
        for rollup, projection in _PROJECTIONS:
            expected = _counted_alone(batch, rollup.seconds, rollup.dimensions)
            assert _project(finest, projection) == expected
