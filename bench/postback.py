"""Benchmark of the postback receiver GET /postback against a JSON 200 that stores nothing.

Run from the repository root (docs/performance.md has the figures and how to read them):

    .venv/bin/python bench/postback.py [--duration 10] [--connections 64] [--rounds 3]

The same harness as bench/redirect.py (bench/harness.py): every target runs in turn on the
loopback interface, its server pinned to CPU 0 and wrk (one thread) to CPU 1: a 2 s warm-up, then a
measured run. The targets:

- ``nginx``: nginx answering ``return 200`` with trilha's JSON answer (one worker), the ceiling;
- ``starlette``: a bare Starlette app answering the same JSON, on granian (one ASGI worker);
- ``asgi``: a bare ASGI function answering the same JSON, on granian, the floor of Python;
- ``postback-store``: the bare function storing each postback with Python's sqlite3 alone (the
  workspace by token, the click, the conversion, its first history row and the log entry, each
  postback in a savepoint; the outbox's destinations once a batch; group-committed in a thread)
  into a database seeded as trilha's: the floor of a durable postback on SQLite, as the issue
  set it;
- ``postback-store-batched``: the same rows stored as trilha's writer now stores them (no
  savepoint each, the workspace once a batch, the batch's history rows and log entries in one
  executemany each at its end): the floor of trilha's own statements (diagnostic);
- ``postback-store-postgres``: ``postback-store-batched`` on a fresh PostgreSQL database,
  through psycopg (one connection in the writer thread, as trilha's): the floor on PostgreSQL;
- ``trilha-sqlite-full`` / ``trilha-sqlite-normal``: ``trilha serve`` (granian, ASGI, 1 worker)
  on a fresh, migrated SQLite file with ``synchronous=FULL`` (the default) or ``NORMAL``;
- ``trilha-postgres``: ``trilha serve`` on a fresh PostgreSQL database, dropped afterwards.

trilha's database holds one workspace, one campaign and 2,000 clicks, created with trilha's own
functions before the server starts. Every request is a matched postback read by the generic
mapping: ``GET /postback?token=<the workspace's token>&click_id=<one of the clicks, in turn>
&txid=<new every request>&event=sale&value=97.00&currency=BRL&status=approved``, built by a wrk
Lua ``request`` function, the same for every target; the transaction id is a random prefix per wrk
run and a counter, so no postback repeats another (a repeat would be a duplicate, not a new
conversion). The token is a secret: it is never printed, nor any URL holding it.

For each target it prints what bench/redirect.py prints: requests/s, p50/p99 latency, the server's
CPU time per request, PostgreSQL's, wrk's and everyone else's. After each run that stores
(trilha's and ``postback-store``'s) it checks that the conversions stored during the measured run
cover every 2xx wrk counted, and that every postback logged during it was ``created`` and wrk saw
no other answer than a 2xx; a failed check makes it exit 1. The figures (medians over the rounds)
also go to bench/results/postback-<time>.json.
"""

from __future__ import annotations

import json
import secrets
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from string import Template
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

from sqlalchemy import Connection, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from bench import harness
from bench.baselines import POSTBACK_ANSWER
from bench.harness import Measurement, Target
from trilha.clicks import ClickRequest, build_click
from trilha.db.schema import clicks, conversions, postback_log, user_agents
from trilha.ids import mint_click_id, new_secret
from trilha.links import DEFAULT_HOST, Link, resolve_link
from trilha.visitors import Visitor, parse_device

CLICKS = 2000
SLUG = "bench"
OFFER_URL = "https://offer.example.com/checkout?cid={click_id}&src={utm_source}"
CLICK_PARAMS = {"utm_source": "facebook", "sub1": "abc"}
VISITOR_AGENT = (
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.0.0 Mobile Safari/537.36"
)
# After the click id and the transaction id, the same for every postback.
FIELDS = "&event=sale&value=97.00&currency=BRL&status=approved"
HEADERS = {"User-Agent": "trilha-bench-postback/1.0"}

# The request generation, the same for every target but for the token; init() gets the run's
# transaction id prefix (wrk runs with one thread, so one counter).
LUA = Template("""
local head = "/postback?token=$token&click_id="
local fields = "$fields"
local ids = {$ids}
local count = #ids
local prefix = "none-"
local n = 0

init = function(args)
  prefix = args[1]
end

request = function()
  n = n + 1
  return wrk.format(nil, head .. ids[n % count + 1] .. "&txid=" .. prefix .. n .. fields)
end
""")

TARGETS = harness.targets(
    Target(
        "postback-store", "granian", app="bench.baselines:postback_store_app", database="sqlite"
    ),
    Target(
        "postback-store-batched",
        "granian",
        app="bench.baselines:postback_store_batched_app",
        database="sqlite",
    ),
    Target(
        "postback-store-postgres",
        "granian",
        app="bench.baselines:postback_store_batched_app",
        database="postgres",
    ),
)

# (trilha target, baseline, the least trilha/baseline the issue asks for)
GOALS = (
    ("trilha-sqlite-full", "nginx", 0.08),
    ("trilha-sqlite-full", "starlette", 0.5),
    ("trilha-sqlite-full", "postback-store", 0.6),
    ("postback-store", "starlette", None),
    ("trilha-postgres", "trilha-sqlite-full", 0.6),
    ("trilha-sqlite-full", "postback-store-batched", None),
    ("trilha-postgres", "postback-store-postgres", None),
    ("postback-store-postgres", "postback-store-batched", None),
    ("trilha-sqlite-normal", "nginx", 0.08),
    ("trilha-sqlite-normal", "starlette", 0.5),
    ("trilha-postgres", "nginx", None),
    ("trilha-postgres", "starlette", None),
)


@dataclass
class PostbackMeasurement(Measurement):
    conversions_stored: int | None = None  # during the measured run
    outcomes: dict[str, int] | None = None  # postback log entries of the measured run, by outcome
    durable: bool | None = None  # the conversions stored cover every 2xx wrk counted
    all_created: bool | None = None  # every entry `created`, and no answer but a 2xx

    def verdicts(self) -> list[str]:
        if self.conversions_stored is None or self.outcomes is None:
            return []
        run = f"{self.target} round {self.round}"
        others = {k: v for k, v in self.outcomes.items() if k != "created"}
        not_2xx = self.requests - self.ok_responses
        return [
            f"{run}: {self.conversions_stored} conversions stored, {self.ok_responses} 2xx "
            f"counted by wrk: {'ok' if self.durable else 'LOST CONVERSIONS'}",
            f"{run}: postbacks logged {self.outcomes}, {not_2xx} answers not 2xx: "
            + ("all created" if self.all_created else f"NOT CREATED: {others}"),
        ]

    @property
    def failed(self) -> bool:
        return self.durable is False or self.all_created is False


def _visitor(i: int) -> Visitor:
    """A different visitor for each click."""
    ip = f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"
    device = parse_device(VISITOR_AGENT)
    return Visitor(ip=ip, user_agent=VISITOR_AGENT, referrer="", device=device, country="BR")


async def _seed(conn: AsyncConnection, click_ids: list[str]) -> str:
    """The campaign and its clicks, as the redirect records them; returns the postback token."""
    now = datetime.now(UTC)
    workspace = await harness.seed_campaign(conn, slug=SLUG, offer_url=OFFER_URL, now=now)
    link = await conn.run_sync(resolve_link, host=DEFAULT_HOST, slug=SLUG)
    if not isinstance(link, Link):
        raise RuntimeError(f"the bench campaign does not resolve: {link}")
    visitors = [_visitor(i) for i in range(len(click_ids))]
    rows = [
        build_click(
            link,
            ClickRequest(
                host=DEFAULT_HOST, slug=SLUG, visitor=visitor, params=CLICK_PARAMS, now=now
            ),
            click_id=click_id,
            visitor_key=visitor.key(link.campaign_id),
            is_unique=True,
        )
        for visitor, click_id in zip(visitors, click_ids, strict=True)
    ]
    agents = {(row["user_agent_key"], row["user_agent"]) for row in rows}
    await conn.execute(user_agents.insert(), [{"key": k, "agent": a} for k, a in agents])
    await conn.execute(
        clicks.insert(), [{k: v for k, v in r.items() if k in clicks.c} for r in rows]
    )
    return workspace.postback_token


def _count(conn: Connection) -> dict[str, int]:
    counts = {"conversions": int(conn.execute(select(func.count(conversions.c.id))).scalar_one())}
    by_outcome = select(postback_log.c.outcome, func.count()).group_by(postback_log.c.outcome)
    for outcome, n in conn.execute(by_outcome):
        counts[f"outcome:{outcome}"] = int(n)
    return counts


class Postback(harness.Benchmark):
    name = "postback"
    description = __doc__ or ""
    targets = TARGETS
    goals = GOALS
    path = "/postback"  # the Lua's request function builds each request
    headers = HEADERS

    def __init__(self) -> None:
        # One pool of click ids for the whole run: every target's Lua holds the same ids.
        self.click_ids = [mint_click_id() for _ in range(CLICKS)]
        self.token = ""
        self.trilha = False

    def prepare(self, url: str | None) -> str:
        self.trilha = url is not None
        if url is None:
            self.token = new_secret()  # as long as a workspace's token: same requests
        else:
            self.token = harness.seed(url, lambda conn: _seed(conn, self.click_ids))
        ids = ",".join(f'"{click_id}"' for click_id in self.click_ids)
        return LUA.substitute(token=self.token, fields=FIELDS, ids=ids)

    def wrk_args(self) -> list[str]:
        """A new transaction id prefix for each wrk run: warm-up and measured run never meet."""
        return [f"{secrets.token_hex(4)}-"]

    def probe(self, port: int) -> dict[str, Any]:
        """One matched postback: 200, JSON, and from trilha ``created``; not a secret inside."""
        txid = f"probe-{secrets.token_hex(4)}"
        path = f"/postback?token={self.token}&click_id={self.click_ids[0]}&txid={txid}{FIELDS}"
        status, headers, body = harness.http_get(port, path, self.headers)
        content_type = headers.get("content-type", "")
        if status != 200 or content_type != "application/json":
            raise RuntimeError(
                f"expected a 200 JSON answer to a postback from port {port}, "
                f"got {status} {content_type}: {body[:300]!r}"
            )
        answer = json.loads(body)
        if self.trilha and answer.get("status") != "created":
            raise RuntimeError(f"trilha answered a matched postback with {answer}")
        if self.trilha and len(body) != len(POSTBACK_ANSWER):
            print(
                f"  note: trilha's answer is {len(body)} bytes, the baselines' "
                f"{len(POSTBACK_ANSWER)}: {body.decode(errors='replace')}"
            )
        return {"answer": answer, "answer_bytes": len(body)}

    def count(self, url: str) -> dict[str, int]:
        return harness.query(url, _count)

    def check(self, m: Measurement, stored: dict[str, int] | None) -> Measurement:
        """The conversions cover every 2xx; every postback was created, none answered but 2xx."""
        if stored is None:
            return PostbackMeasurement(**harness.fields_of(m))
        outcomes = {
            key.removeprefix("outcome:"): n
            for key, n in stored.items()
            if key.startswith("outcome:") and n
        }
        created_only = set(outcomes) <= {"created"}
        return PostbackMeasurement(
            **harness.fields_of(m),
            conversions_stored=stored["conversions"],
            outcomes=outcomes,
            durable=stored["conversions"] >= m.ok_responses,
            all_created=created_only and m.ok_responses == m.requests,
        )


if __name__ == "__main__":
    sys.exit(harness.main(Postback()))
