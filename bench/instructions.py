"""Instructions a postback or a click costs trilha and the bare stores, counted by callgrind.

Run from the repository root (docs/performance.md, "The postback's instructions", has the
figures); it needs valgrind (Debian's package):

    .venv/bin/python bench/instructions.py [postback|redirect] [--count 400]

Time on a shared machine varies by a tenth from one run to the next, more than most single
changes to the hot path give; the instructions executed do not. For each target this runs a
process under callgrind with the counting off, seeds a fresh SQLite database as the wrk
benchmarks do, warms up with 200 requests, then counts ``--count`` more, 40 at a time as the
group commit batches them under load. It prints instructions per request for each target, and
each one's ratio to trilha's (the share of trilha's work the floor does).

``postback`` (one workspace, one campaign, clicks made with trilha's own functions; matched
postbacks read by the generic mapping, as bench/postback.py sends them) counts the writer alone,
not the HTTP side:

- ``postback-store``: bench/baselines.py's bare store (sqlite3 alone, each postback in a
  savepoint), its ``write`` called with the batch: the floor bench/postback.py measures against;
- ``postback-store-batched``: the same rows stored as trilha's writer stores them;
- ``trilha``: the postback writer's own function, each batch in its transaction, committed.

``redirect`` (one campaign; ``GET /r/bench`` as bench/redirect.py --visitors sends it, each
request from another visitor's address through a trusted proxy) counts the whole request in
process, the event loop and the writer thread, driven through the ASGI app (granian's own work
is not counted):

- ``sqlite-store``: bench/baselines.py's bare click store, the floor of bench/redirect.py;
- ``trilha``: trilha's app, started through its ASGI lifespan as the server starts it, with its
  periodic work (the checkpoint every second, upkeep, the delivery worker) then stopped: under
  callgrind's slowdown a second holds fifty times the requests it does in life, and those
  timers would be counted fifty times over.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

BATCH = 40
WARM_UP = 200
CLICKS = 200
TARGETS = {
    "postback": ("postback-store", "postback-store-batched", "trilha"),
    "redirect": ("sqlite-store", "trilha"),
}
_TOTALS = re.compile(r"^totals:\s+(\d+)", re.MULTILINE)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("kind", nargs="?", choices=TARGETS, default="postback")
    parser.add_argument("--count", type=int, default=400, help="requests counted")
    parser.add_argument("--target", help=argparse.SUPPRESS)  # the counted child's
    args = parser.parse_args()
    if args.target:
        child = _postback_child if args.kind == "postback" else _redirect_child
        child(args.target, args.count)
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind)")
    counted = {
        target: _count(args.kind, target, args.count) / args.count for target in TARGETS[args.kind]
    }
    print(f"instructions a {args.kind} request, {args.count} counted, {BATCH} at a time")
    print("| target | instructions | target / trilha |\n|---|---:|---:|")
    for target, each in counted.items():
        print(f"| {target} | {each:,.0f} | {each / counted['trilha']:.2f} |")


def _count(kind: str, target: str, count: int) -> int:
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
                kind,
                "--target",
                target,
                "--count",
                str(count),
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


def _postback_child(target: str, postbacks: int) -> None:
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


def _redirect_child(target: str, clicks: int) -> None:
    """Seed the campaign, start the app, warm up, say READY, answer ``clicks`` redirects when
    told, say DONE."""
    from datetime import UTC, datetime

    from bench import harness
    from bench import redirect as redirect_bench
    from trilha.db.migrate import migrate

    with tempfile.TemporaryDirectory() as here:
        path = Path(here) / "trilha.db"
        url = f"sqlite+aiosqlite:///{path}"
        migrate(url)
        harness.seed(
            url,
            lambda conn: harness.seed_campaign(
                conn,
                slug=redirect_bench.SLUG,
                offer_url=redirect_bench.OFFER_URL,
                now=datetime.now(UTC),
            ),
        )
        os.environ["TRILHA_DATABASE_URL"] = url
        os.environ["TRILHA_TRUSTED_PROXIES"] = "127.0.0.1/32"
        os.environ["BENCH_SQLITE_DB"] = str(path)
        asyncio.run(_redirects(target, clicks, Path(here)))


async def _redirects(target: str, clicks: int, here: Path) -> None:
    from bench import redirect as redirect_bench

    app = await (_trilha_app() if target == "trilha" else _store_app())
    path, _, query = redirect_bench.PATH.partition("?")
    agent = redirect_bench.USER_AGENT.encode()

    async def click(visitor: int) -> None:
        address = f"10.{visitor // 65536 % 256}.{visitor // 256 % 256}.{visitor % 256}"
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [
                (b"host", b"127.0.0.1:8000"),
                (b"user-agent", agent),
                (b"x-forwarded-for", address.encode()),
            ],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        if sent[0]["status"] != 302:
            sys.exit(f"a redirect was answered {sent[0]['status']}")

    async def clicks_of(first: int, count: int) -> None:
        for start in range(first, first + count, BATCH):
            await asyncio.gather(*(click(n) for n in range(start, start + BATCH)))

    loop = asyncio.get_running_loop()
    await clicks_of(1_000_000, WARM_UP)  # visitors of their own: each counted click is unique
    print("READY", flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)
    await clicks_of(0, clicks)
    print("DONE", flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)  # until the count is turned off
    shutil.rmtree(here, ignore_errors=True)
    os._exit(0)  # the app's writer threads need not be waited for


async def _trilha_app() -> Any:
    """trilha's app, started, its periodic work stopped (see the module's docstring)."""
    from trilha import group_commit
    from trilha.app import create_app

    group_commit.SQLITE_CHECKPOINT_INTERVAL = 3600.0
    app = create_app()
    await _started(app)  # through its lifespan, as the server starts it
    runtime = app.runtime
    if runtime._upkeep is not None:
        runtime._upkeep.cancel()
    if runtime.deliveries is not None:
        await runtime.deliveries.stop()
    return app


async def _store_app() -> Any:
    """bench/baselines.py's bare click store, its lifespan started."""
    from bench import baselines

    await _started(baselines.sqlite_store_app)
    return baselines.sqlite_store_app


async def _started(app: Any) -> None:
    """Start an ASGI app's lifespan, as the server does, and leave it running."""
    asked, done = asyncio.Event(), asyncio.Event()

    async def receive() -> dict[str, Any]:
        if not asked.is_set():
            asked.set()
            return {"type": "lifespan.startup"}
        await asyncio.Event().wait()  # no shutdown: the counted process ends with os._exit
        return {}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] != "lifespan.startup.complete":
            sys.exit(f"the app did not start: {message}")
        done.set()

    _lifespans.add(asyncio.get_running_loop().create_task(app({"type": "lifespan"}, receive, send)))
    await done.wait()


_lifespans: set[asyncio.Task[None]] = set()


if __name__ == "__main__":
    main()
