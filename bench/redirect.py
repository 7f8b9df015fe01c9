"""Benchmark of the redirect GET /r/{slug} against a 302 that stores nothing.

Run from the repository root (docs/performance.md has the figures and how to read them):

    .venv/bin/python bench/redirect.py [--duration 10] [--connections 64] [--rounds 3]
                                       [--visitors 1]

Every target runs in turn on the loopback interface, its server pinned to CPU 0 and wrk (one
thread) to CPU 1: a 2 s warm-up, then a measured run. The targets:

- ``nginx``: nginx answering ``return 302`` (one worker), the ceiling of the machine;
- ``starlette``: a bare Starlette app answering the same 302, on granian (one ASGI worker);
- ``asgi``: a bare ASGI function answering the same 302, on granian, the floor of Python;
- ``asgi-batched``: the bare function behind a group "commit" that stores nothing (diagnostic);
- ``sqlite-narrow``: the bare function committing, group-committed, only each click's id and time
  (two columns, no index): the floor of a durable write, whatever the row (diagnostic);
- ``sqlite-store``: the bare function storing the same click row with Python's sqlite3 alone,
  group-committed, into a migrated trilha database: the floor of a durable click (diagnostic);
- ``store-postgres``: the same store on a fresh PostgreSQL database through psycopg (one
  connection in the writer thread, as trilha's; the batch's clicks in one COPY): the floor of a
  durable click on PostgreSQL (diagnostic);
- ``trilha-sqlite-full`` / ``trilha-sqlite-normal``: ``trilha serve`` (granian, ASGI, 1 worker)
  on a fresh, migrated SQLite file with ``synchronous=FULL`` (the default) or ``NORMAL``;
- ``trilha-postgres``: ``trilha serve`` on a fresh PostgreSQL database, dropped afterwards.

By default every request is the same, from one visitor, so every click's uniqueness key lands on
the same index page. ``--visitors N`` spreads the requests over N visitors, as real traffic is:
request n carries ``X-Forwarded-For: 10.x.y.z`` for visitor n mod N, trilha trusts the loopback
proxy for the run and ``sqlite-store`` and ``store-postgres`` read the same header.

For each target it prints requests/s, p50/p99 latency, the server's CPU time per request (its
process tree's utime+stime from /proc), for PostgreSQL the CPU of the server processes serving
trilha's connections, wrk's own CPU (near 100 % means wrk was the limit) and what every other
process on the machine used meanwhile (a run disturbed by them is measured again). After each
run that stores clicks it checks that they cover every 2xx/3xx wrk counted. The figures (medians
over the rounds) also go to bench/results/redirect-<time>.json.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

from sqlalchemy import Connection, func, inspect, select, table

from bench import harness
from bench.baselines import NARROW_TABLE
from bench.harness import Measurement, Target
from trilha.db.schema import clicks

SLUG = "bench"
PATH = f"/r/{SLUG}?utm_source=facebook&sub1=abc&ad_id=120210000000001&fbclid=IwAR0bench"
OFFER_URL = "https://offer.example.com/checkout?cid={click_id}&src={utm_source}&s1={sub1}"
USER_AGENT = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
)


TARGETS = harness.targets(
    Target("asgi-batched", "granian", app="bench.baselines:batched_app"),
    Target("sqlite-narrow", "granian", app="bench.baselines:sqlite_narrow_app", database="sqlite"),
    Target("sqlite-store", "granian", app="bench.baselines:sqlite_store_app", database="sqlite"),
    Target(
        "store-postgres", "granian", app="bench.baselines:postgres_store_app", database="postgres"
    ),
)

# (trilha target, baseline, the least trilha/baseline the issue asks for)
GOALS = (
    ("trilha-sqlite-full", "nginx", 0.15),
    ("trilha-sqlite-full", "starlette", 0.8),
    ("trilha-sqlite-full", "sqlite-store", 0.75),
    ("sqlite-narrow", "starlette", None),
    ("sqlite-store", "starlette", None),
    ("trilha-sqlite-normal", "nginx", 0.15),
    ("trilha-sqlite-normal", "starlette", 0.8),
    ("trilha-postgres", "nginx", 0.1),
    ("trilha-postgres", "starlette", None),
    ("trilha-postgres", "trilha-sqlite-full", 0.85),
    ("store-postgres", "sqlite-store", None),
    ("trilha-postgres", "store-postgres", None),
)
HEADERS = {"User-Agent": USER_AGENT}

# With --visitors N, request n comes from visitor n mod N: the same user agent, the IP in
# X-Forwarded-For (trilha trusts the loopback proxy for the run), so that the clicks' uniqueness
# keys spread over N visitors as real traffic's do instead of all sharing one.
VISITORS_LUA = """
local visitors = %d
local headers = {}
local n = 0
init = function(args)
  for name, value in pairs(wrk.headers) do headers[name] = value end
end
request = function()
  local k = n %% visitors
  n = n + 1
  headers["X-Forwarded-For"] = string.format(
    "10.%%d.%%d.%%d", math.floor(k / 65536) %% 256, math.floor(k / 256) %% 256, k %% 256)
  return wrk.format(nil, nil, headers)
end
"""


@dataclass
class RedirectMeasurement(Measurement):
    clicks_stored: int | None = None  # during the measured run
    durable: bool | None = None

    def verdicts(self) -> list[str]:
        if self.clicks_stored is None:
            return []
        verdict = "ok" if self.durable else "LOST CLICKS"
        return [
            f"{self.target} round {self.round}: {self.clicks_stored} clicks stored, "
            f"{self.ok_responses} 2xx/3xx counted by wrk: {verdict}"
        ]

    @property
    def failed(self) -> bool:
        return self.durable is False


def _clicks_stored(conn: Connection) -> int:
    """The clicks in the database, and the rows sqlite-narrow stores in their place."""
    stored = conn.execute(select(func.count()).select_from(clicks)).scalar_one()
    if inspect(conn).has_table(NARROW_TABLE):
        stored += conn.execute(select(func.count()).select_from(table(NARROW_TABLE))).scalar_one()
    return int(stored)


class Redirect(harness.Benchmark):
    name = "redirect"
    description = __doc__ or ""
    targets = TARGETS
    goals = GOALS
    path = PATH
    headers = HEADERS
    visitors = 1

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--visitors",
            type=int,
            default=1,
            help="distinct visitors (IPs) the requests come from; 1: all from one, as before",
        )

    def configure(self, args: argparse.Namespace) -> None:
        if not 1 <= args.visitors <= 2**24:
            raise SystemExit("--visitors must be from 1 to 16777216")
        self.visitors = args.visitors
        self.workload = {"visitors": self.visitors}
        if self.visitors > 1:
            self.server_env = {"TRILHA_TRUSTED_PROXIES": "127.0.0.1/32"}

    def prepare(self, url: str | None) -> str:
        if url is not None:
            harness.seed(
                url,
                lambda conn: harness.seed_campaign(
                    conn, slug=SLUG, offer_url=OFFER_URL, now=datetime.now(UTC)
                ),
            )
        if self.visitors == 1:
            return ""  # wrk sends PATH, the same request every time
        return VISITORS_LUA % self.visitors

    def probe(self, port: int) -> dict[str, Any]:
        """The target must answer 302; its Location goes into the results."""
        status, headers, _ = harness.http_get(port, PATH, self.headers)
        if status != 302:
            raise RuntimeError(f"expected a 302 from port {port}, got {status}")
        return {"location": headers.get("location") or ""}

    def count(self, url: str) -> dict[str, int]:
        return {"clicks": harness.query(url, _clicks_stored)}

    def check(self, m: Measurement, stored: dict[str, int] | None) -> Measurement:
        """The clicks stored during the measured run cover every 2xx/3xx wrk counted."""
        clicks_stored = None if stored is None else stored["clicks"]
        return RedirectMeasurement(
            **harness.fields_of(m),
            clicks_stored=clicks_stored,
            durable=None if clicks_stored is None else clicks_stored >= m.ok_responses,
        )


if __name__ == "__main__":
    sys.exit(harness.main(Redirect()))
