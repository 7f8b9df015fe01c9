"""Instructions a matched postback costs trilha's writer and the bare store, counted by callgrind.

Run from the repository root (docs/performance.md, "The postback's instructions", has the
figures); it needs valgrind (Debian's package):

    .venv/bin/python bench/instructions.py [--postbacks 400]

Time on a shared machine varies by a tenth from one run to the next, more than most single
changes to the hot path give; the instructions a postback executes do not. For each target this
runs a process under callgrind with the counting off, seeds a fresh SQLite database as
bench/postback.py does (one workspace, one campaign, clicks made with trilha's own functions),
stores 200 postbacks to warm it up, then counts ``--postbacks`` matched postbacks, stored in
batches of 40 as the group commit makes them under load:

- ``postback-store``: bench/baselines.py's bare store (sqlite3 alone, each postback in a
  savepoint), its ``write`` called with the batch, the floor as bench/postback.py measures it;
- ``postback-store-batched``: the same rows stored as trilha's writer stores them;
- ``trilha``: the postback writer's own function (``trilha.postbacks.writer``), each batch in
  its transaction, committed.

It prints instructions per postback for each, and each one's ratio to trilha's (a floor's
instructions over trilha's: the share of trilha's work the floor does). The HTTP side
(granian, the ASGI handler) is not counted: bench/postback.py measures the whole.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

BATCH = 40
WARM_UP = 200
CLICKS = 200
TARGETS = ("postback-store", "postback-store-batched", "trilha")
_TOTALS = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--postbacks", type=int, default=400, help="postbacks counted")
    parser.add_argument("--target", choices=TARGETS, help=argparse.SUPPRESS)  # the child's
    args = parser.parse_args()
    if args.target:
        _child(args.target, args.postbacks)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    counted = {target: _count(target, args.postbacks) / args.postbacks for target in TARGETS}
    print(f"instructions a matched postback, {args.postbacks} postbacks in batches of {BATCH}")
    print("| target | instructions | target / trilha |\n|---|---:|---:|")
    for target, each in counted.items():
        print(f"| {target} | {each:,.0f} | {each / counted['trilha']:.2f} |")


def _count(target: str, postbacks: int) -> int:
    """Run the target's child under callgrind, counting only between its READY and DONE."""
    with tempfile.TemporaryDirectory() as here:
        out = Path(here) / "callgrind.out"
        child = subprocess.Popen(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--target",
                target,
                "--postbacks",
                str(postbacks),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert child.stdin is not None
        assert child.stdout is not None
        _expect(child.stdout.readline(), "READY")
        _instrument(child.pid, "on")
        child.stdin.write("go\n")
        child.stdin.flush()
        _expect(child.stdout.readline(), "DONE")
        _instrument(child.pid, "off")
        child.stdin.close()
        if child.wait() != 0:
            sys.exit(f"{target}: the counted process failed")
        found = _TOTALS.search(out.read_text())
        if found is None:
            sys.exit(f"{target}: callgrind wrote no totals")
        return int(found.group(1))


def _expect(line: str, word: str) -> None:
    if line.strip() != word:
        sys.exit(f"expected {word} from the counted process, got {line.strip()!r}")


def _instrument(pid: int, state: str) -> None:
    subprocess.run(
        ["callgrind_control", "-i", state, str(pid)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _child(target: str, postbacks: int) -> None:
    """Seed, warm up, say READY, store ``postbacks`` when told, say DONE."""
    from bench import harness
    from bench import postback as postback_bench
    from trilha.db.migrate import migrate
    from trilha.ids import mint_click_id

    with tempfile.TemporaryDirectory() as here:
        path = Path(here) / "trilha.db"
        url = f"sqlite+aiosqlite:///{path}"
        migrate(url)
        click_ids = [mint_click_id() for _ in range(CLICKS)]
        token = harness.seed(url, lambda conn: postback_bench._seed(conn, click_ids))
        store = _trilha(url, token, click_ids) if target == "trilha" else _floor(target, path)
        queries = [
            f"token={token}&click_id={click_ids[n % CLICKS]}&txid={prefix}{n}"
            for prefix, count in (("warm-", WARM_UP), ("counted-", postbacks))
            for n in range(count)
        ]
        batches = [queries[start : start + BATCH] for start in range(0, len(queries), BATCH)]
        warm = len(range(0, WARM_UP, BATCH))
        for batch in batches[:warm]:
            store(batch)
        print("READY", flush=True)
        sys.stdin.readline()
        for batch in batches[warm:]:
            store(batch)
        print("DONE", flush=True)
        sys.stdin.readline()  # until the count is turned off


def _trilha(url: str, token: str, click_ids: list[str]) -> Callable[[list[str]], None]:
    """The postback writer's function on the batch's requests, as the group commit calls it."""
    from datetime import UTC, datetime

    from bench import postback as postback_bench
    from trilha.db.engine import blocking_engine, make_engine
    from trilha.postbacks import writer
    from trilha.postbacks.payload import Received
    from trilha.postbacks.raw import RawPostback

    conn = blocking_engine(make_engine(url)).connect()
    headers = (("host", "127.0.0.1"), ("user-agent", postback_bench.HEADERS["User-Agent"]))

    def store(batch: list[str]) -> None:
        now = datetime.now(UTC)
        received = [
            Received(
                RawPostback(
                    "GET",
                    "/postback",
                    query + postback_bench.FIELDS,
                    headers,
                    b"",
                    "127.0.0.1",
                    "127.0.0.1",
                    now,
                ),
                {},
            )
            for query in batch
        ]
        with conn.begin():
            results = writer._whole_batch(conn, received)
        if not all(getattr(result, "outcome", None) for result in results):
            sys.exit(f"a postback was not stored: {results}")

    return store


def _floor(target: str, path: Path) -> Callable[[list[str]], None]:
    """bench/baselines.py's bare store, its ``write`` called with the batch."""
    from bench import baselines
    from bench import postback as postback_bench

    batched = target == "postback-store-batched"
    kind = baselines._BatchedPostbackStore if batched else baselines._PostbackStore
    floor = kind(str(path))
    headers = json.dumps(
        [["host", "127.0.0.1"], ["user-agent", postback_bench.HEADERS["User-Agent"]]]
    )

    def store(batch: list[str]) -> None:
        floor.write([(query + postback_bench.FIELDS, headers, "127.0.0.1") for query in batch])

    return store


if __name__ == "__main__":
    main()
