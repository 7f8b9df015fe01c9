"""Where a matched postback's CPU goes, stage by stage, in process (no HTTP, no wrk).

Run from the repository root (docs/performance.md, "The postback's stages", has the figures):

    .venv/bin/python bench/postback_stages.py [--postbacks 4000] [--rounds 3]
                                              [--database-url postgresql+psycopg://...]

It seeds a fresh database as bench/postback.py does (one workspace, one campaign, 2,000 clicks;
SQLite in a temporary file unless ``--database-url`` names an empty PostgreSQL database), then
stores the benchmark's matched postbacks through the postback writer's own function, in batches
of 40 as the group commit makes them under load, and times each stage of
``trilha.postbacks.receive`` (read, identify the workspace, choose the merchant, check it, map,
find the click, protect the buyer's data, record, enqueue), the log entry, what runs between
them (the trace, the result, and the timing itself), the batch's deferred inserts and its
commit, in CPU time of this process (the database's own work on PostgreSQL is not in it). It
prints microseconds per postback for each, the median of the rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

from bench import harness
from bench import postback as postback_bench
from trilha.db.engine import blocking_engine, make_engine
from trilha.db.migrate import migrate
from trilha.ids import mint_click_id
from trilha.postbacks import receive, writer
from trilha.postbacks.payload import Received
from trilha.postbacks.raw import RawPostback

BATCH = 40
STAGES = (
    "read_request",
    "identify_workspace",
    "choose_merchant",
    "check_sender",
    "map_postback",
    "find_sale_click",
    "protect_buyer",
    "record",
    "enqueue",
    "write_log",
)
P = ParamSpec("P")
T = TypeVar("T")


class Clock:
    """CPU seconds spent in each timed function, outermost calls only."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)

    def timed(self, name: str, function: Callable[P, T]) -> Callable[P, T]:
        @wraps(function)
        def run(*args: P.args, **kwargs: P.kwargs) -> T:
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.spent[name] += time.process_time() - started

        return run


@contextmanager
def timing(clock: Clock) -> Iterator[None]:
    """Each stage of trilha.postbacks.receive, and the log writer it calls, timed."""
    originals: list[tuple[Any, str, Any]] = []
    for name in STAGES:
        originals.append((receive, name, getattr(receive, name)))
        setattr(receive, name, clock.timed(name, getattr(receive, name)))
    try:
        yield
    finally:
        for module, name, original in originals:
            setattr(module, name, original)


def requests(token: str, click_ids: list[str], prefix: str, count: int) -> list[Received]:
    now = datetime.now(UTC)
    made = []
    for n in range(count):
        query = (
            f"token={token}&click_id={click_ids[n % len(click_ids)]}&txid={prefix}{n}"
            + postback_bench.FIELDS
        )
        headers = (("host", "127.0.0.1"), ("user-agent", postback_bench.HEADERS["User-Agent"]))
        raw = RawPostback("GET", "/postback", query, headers, b"", "127.0.0.1", "127.0.0.1", now)
        made.append(Received(raw, {}))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--postbacks", type=int, default=4000, help="postbacks a round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database-url", help="an empty PostgreSQL database (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as here:
        url = args.database_url or f"sqlite+aiosqlite:///{Path(here) / 'trilha.db'}"
        migrate(url)
        click_ids = [mint_click_id() for _ in range(postback_bench.CLICKS)]
        token = harness.seed(url, lambda conn: postback_bench._seed(conn, click_ids))
        engine = make_engine(url)
        blocking = blocking_engine(engine)
        rounds: list[dict[str, float]] = []
        with blocking.connect() as conn:

            def store(batch: list[Received], clock: Clock) -> None:
                started = time.process_time()
                transaction = conn.begin()
                results = writer._whole_batch(conn, batch)
                committed = time.process_time()
                transaction.commit()
                clock.spent["commit"] += time.process_time() - committed
                clock.spent["batch"] += time.process_time() - started
                assert all(getattr(r, "outcome", None) for r in results), results

            store(requests(token, click_ids, "warm-", BATCH * 10), Clock())
            for n in range(args.rounds):
                clock = Clock()
                whole = receive.receive_postback  # as the writer calls it
                with timing(clock):
                    setattr(writer, "receive_postback", clock.timed("postback", whole))  # noqa: B010
                    try:
                        made = requests(token, click_ids, f"r{n}-", args.postbacks)
                        for start in range(0, len(made), BATCH):
                            store(made[start : start + BATCH], clock)
                    finally:
                        setattr(writer, "receive_postback", whole)  # noqa: B010
                spent = clock.spent
                spent["between the stages"] = spent["postback"] - sum(spent[s] for s in STAGES)
                # What the batch did besides its postbacks: above all, the deferred inserts.
                spent["deferred inserts"] = spent["batch"] - spent["postback"] - spent["commit"]
                rounds.append({k: v / args.postbacks * 1e6 for k, v in spent.items()})
        blocking.dispose()
    names = [*STAGES, "between the stages", "deferred inserts", "commit"]
    print(f"{engine.dialect.name}, {args.postbacks} postbacks a round, medians of {args.rounds}")
    print("| stage | CPU µs a postback |\n|---|---:|")
    for name in names:
        print(f"| {name} | {statistics.median(r[name] for r in rounds):.1f} |")
    total = statistics.median(r["batch"] for r in rounds)
    print(f"| **the batch, all of it** | **{total:.1f}** |")


if __name__ == "__main__":
    main()
