"""The no-storage baselines bench/redirect.py and bench/postback.py serve with granian: the same
answers as trilha's, nothing stored.

``starlette_app`` is the framework baseline (routing, a Request, a RedirectResponse for
``/r/{slug}``, a Response for ``/postback``); ``asgi_app`` is the floor of granian + Python: a bare
ASGI function, as trilha's redirect and postback are. Both answer ``/postback`` with
``POSTBACK_ANSWER``, as long as trilha's answer to a created postback (nginx answers it too).
``batched_app`` is a diagnostic of the redirect: the bare function, but each request first waits
for a group "commit" that stores nothing, run in a worker thread as trilha's click writer runs its
batches on SQLite. What trilha costs beyond it is the click's own work and its SQL.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl

import psycopg
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from trilha.db.schema import EPOCH
from trilha.ids import mint_click_id, new_id
from trilha.reports.rollups import COUNTS, ROLLUPS, slot_of
from trilha.visitors import agent_key, visitor_key
from trilha.web.asgi import Receive, Scope, Send

# As long as the Location trilha sends for bench/redirect.py's request, macros filled.
LOCATION = "https://offer.example.com/checkout?cid=0Pq3s9AbCdEfGhIjKlMnOpQ&src=facebook&s1=abc"
HEADERS = {"cache-control": "no-store", "referrer-policy": "no-referrer-when-downgrade"}
# trilha's answer to a created postback (trilha.postbacks.result.Result.answer, sent with
# json.dumps' default separators): same keys, same length, two made-up 22-character ids.
POSTBACK_ANSWER = (
    '{"status": "created", "event": "SALE", "conversion_id": "0Pq3s9AbCdEfGhIjKlMnOp", '
    '"conversion_status": "approved", "postback_id": "1Qr4t0BcDeFgHiJkLmNoPq"}'
)
_POSTBACK_BODY = POSTBACK_ANSWER.encode()


async def _redirect(_request: Request) -> Response:
    return RedirectResponse(LOCATION, status_code=302, headers=HEADERS)


async def _postback(_request: Request) -> Response:
    return Response(
        _POSTBACK_BODY, media_type="application/json", headers={"cache-control": "no-store"}
    )


starlette_app = Starlette(
    routes=[
        Route("/r/{slug}", _redirect, methods=["GET", "HEAD"]),
        Route("/postback", _postback, methods=["GET", "POST"]),
    ]
)

_RAW_HEADERS = [
    (b"location", LOCATION.encode("ascii")),
    (b"cache-control", b"no-store"),
    (b"referrer-policy", b"no-referrer-when-downgrade"),
    (b"content-length", b"0"),
]
_POSTBACK_HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(_POSTBACK_BODY)).encode()),
    (b"cache-control", b"no-store"),
]


async def _lifespan(receive: Receive, send: Send) -> None:
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def asgi_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    if scope["path"] == "/postback":
        await send({"type": "http.response.start", "status": 200, "headers": _POSTBACK_HEADERS})
        await send({"type": "http.response.body", "body": _POSTBACK_BODY})
        return
    await send({"type": "http.response.start", "status": 302, "headers": _RAW_HEADERS})
    await send({"type": "http.response.body", "body": b""})


def _commit(size: int) -> int:
    return size


class _GroupCommit:
    """trilha's ClickWriter handshake with nothing to write."""

    def __init__(self) -> None:
        self.pending: list[asyncio.Future[None]] = []
        self.wakeup = asyncio.Event()
        self.thread = ThreadPoolExecutor(1)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self.wakeup.wait()
            batch, self.pending = self.pending, []
            self.wakeup.clear()
            await loop.run_in_executor(self.thread, _commit, len(batch))
            for future in batch:
                future.set_result(None)

    async def record(self) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append(future)
        self.wakeup.set()
        await future


_group: list[_GroupCommit] = []
_writer: set[asyncio.Task[None]] = set()


async def batched_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        _group.append(_GroupCommit())
        _writer.add(asyncio.create_task(_group[0].run()))
        await _lifespan(receive, send)
        return
    await _group[0].record()
    await send({"type": "http.response.start", "status": 302, "headers": _RAW_HEADERS})
    await send({"type": "http.response.body", "body": b""})


# --- the bare store ---------------------------------------------------------------------------
# ``sqlite_store_app``: the raw ASGI function storing each click of bench/redirect.py's request
# with Python's sqlite3 alone, group-committed in a thread as trilha's writer does, into a
# migrated trilha database (BENCH_SQLITE_DB): the same row, the same table and indexes, the same
# pragmas, and a 302 only after the commit. Like trilha, each batch also asks which of its
# visitors clicked the campaign in the last 24 hours (the unique count) and adds its clicks to
# the hourly and daily sums the reports read (one upsert per sum). What trilha costs beyond it
# is trilha's own work.

_RECENT_SQL = (
    "SELECT keys.value FROM json_each(?) AS keys WHERE (SELECT 1 FROM clicks"
    " WHERE visitor_key = keys.value AND created_at > ? LIMIT 1) IS NOT NULL"
)
# The sums' tables and keys, as trilha.reports.rollups keeps them.
_ROLLUP_SQL = [
    (
        rollup,
        f"INSERT INTO {rollup.table.name} ({', '.join((*rollup.key, *COUNTS))})"  # noqa: S608 -- constant
        f" VALUES ({', '.join('?' * (len(rollup.key) + len(COUNTS)))})"
        f" ON CONFLICT ({', '.join(rollup.key)}) DO UPDATE SET "
        + ", ".join(f"{c} = {rollup.table.name}.{c} + excluded.{c}" for c in COUNTS),
    )
    for rollup in ROLLUPS
]

_STORE_COLUMNS = (
    "id, campaign_id, created_at, ip, user_agent_key, visitor_key, device_type, os, "
    "browser, country, referrer, is_bot, is_unique, utm_source, sub1, ad_id, fbclid, params"
)
_STORE_SQL = f"INSERT INTO clicks ({_STORE_COLUMNS}) VALUES ({', '.join('?' * 18)})"  # noqa: S608 -- constant
_AGENT_SQL = "INSERT OR IGNORE INTO user_agents (key, agent) VALUES (?, ?)"


class _Store:
    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for pragma in (
            "journal_mode=WAL",
            "synchronous=FULL",
            "foreign_keys=ON",
            "wal_autocheckpoint=0",
        ):
            self.db.execute(f"PRAGMA {pragma}")
        self.ready()

    def ready(self) -> None:
        """What a store holds beside its connection: the bench campaign, the requests waiting
        for the next batch and the writer thread."""
        self.workspace_id, self.campaign_id = self.db.execute(
            "SELECT workspace_id, id FROM campaigns WHERE slug = 'bench'"
        ).fetchone()
        self.pending: list[tuple[str, str, str]] = []  # (query, user agent, ip)
        self.batch: asyncio.Future[list[str]] | None = None
        self.wakeup = asyncio.Event()
        self.thread = ThreadPoolExecutor(1)

    def moment(self, now: datetime) -> object:
        """A time as the store binds it: on SQLite a click's time is its microseconds since
        1970 (trilha.db.schema.ClickTime)."""
        return (now - EPOCH) // timedelta(microseconds=1)

    def recent(self, visitors: list[int], since: object) -> set[int]:
        """Which of the batch's visitors clicked the campaign since ``since``."""
        return {
            key for (key,) in self.db.execute(_RECENT_SQL, (json.dumps(sorted(visitors)), since))
        }

    def store_agents(self, agents: list[tuple[int, str]]) -> None:
        self.db.executemany(_AGENT_SQL, agents)

    def insert(self, rows: list[tuple[Any, ...]]) -> None:
        self.db.executemany(_STORE_SQL, rows)

    def write(self, requests: list[tuple[str, str, str]]) -> list[str]:
        now = datetime.now(UTC)
        created_at = self.moment(now)
        since = self.moment(now - timedelta(hours=24))
        visitors = [visitor_key(self.campaign_id, ip, agent) for _, agent, ip in requests]
        self.db.execute("BEGIN IMMEDIATE")
        seen = self.recent(visitors, since)
        rows = []
        agents = {agent: agent_key(agent) for _, agent, _ in requests}
        self.store_agents(sorted((key, agent) for agent, key in agents.items()))
        for (query, user_agent, ip), visitor in zip(requests, visitors, strict=True):
            params = dict(parse_qsl(query))
            is_unique = visitor not in seen
            seen.add(visitor)
            rows.append(
                (
                    mint_click_id(now),
                    self.campaign_id,
                    created_at,
                    ip,
                    agents[user_agent],
                    visitor,
                    "mobile",
                    "iOS",
                    "Mobile Safari",
                    "",
                    "",
                    0,
                    int(is_unique),
                    params.get("utm_source"),
                    params.get("sub1"),
                    params.get("ad_id"),
                    params.get("fbclid"),
                    "{}",
                )
            )
        self.insert(rows)
        # The batch's sums by sub1 (one campaign, no source, one hour), each upserted once.
        by_sub1: dict[str, list[int]] = {}
        for row in rows:
            sums = by_sub1.setdefault(row[14] or "", [0, 0, 0])
            sums[0] += 1
            sums[1] += row[12]
        for rollup, sql in _ROLLUP_SQL:
            slot = slot_of(now, rollup.seconds)
            if "sub1" not in rollup.dimensions:
                total = [sum(s[0] for s in by_sub1.values()), sum(s[1] for s in by_sub1.values())]
                self.db.execute(sql, (self.workspace_id, slot, self.campaign_id, "", *total, 0))
                continue
            for sub1, (clicks, unique, bots) in sorted(by_sub1.items()):
                key = (self.workspace_id, slot, self.campaign_id, "", sub1)
                self.db.execute(sql, (*key, clicks, unique, bots))
        self.db.execute("COMMIT")
        return [
            f"https://offer.example.com/checkout?cid={row[0]}&src=facebook&s1=abc" for row in rows
        ]

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self.wakeup.wait()
            self.wakeup.clear()
            requests, self.pending = self.pending, []
            batch, self.batch = self.batch, None
            assert batch is not None
            batch.set_result(await loop.run_in_executor(self.thread, self.write, requests))

    async def record(self, query: str, user_agent: str, ip: str) -> str:
        if self.batch is None:
            self.batch = asyncio.get_running_loop().create_future()
        batch, position = self.batch, len(self.pending)
        self.pending.append((query, user_agent, ip))
        self.wakeup.set()
        return (await batch)[position]


_store: list[_Store] = []


async def _store_lifespan(store: _Store, receive: Receive, send: Send) -> None:
    """Start the store's writer with the server; the server's lifespan protocol."""
    _writer.add(asyncio.create_task(store.run()))
    await _lifespan(receive, send)


async def sqlite_store_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        _store.append(_Store(os.environ["BENCH_SQLITE_DB"]))
        await _store_lifespan(_store[0], receive, send)
        return
    await _redirect_stored(scope, send)


async def _redirect_stored(scope: Scope, send: Send) -> None:
    """The 302 to the offer, once the store has committed the click."""
    sent = dict(scope["headers"])
    user_agent = sent.get(b"user-agent", b"").decode()
    # bench/redirect.py --visitors sends the visitor's IP as a proxy would.
    ip = sent.get(b"x-forwarded-for", scope["client"][0].encode()).decode()
    location = await _store[0].record(scope["query_string"].decode(), user_agent, ip)
    headers = [(b"location", location.encode()), *_RAW_HEADERS[1:]]
    await send({"type": "http.response.start", "status": 302, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


NARROW_TABLE = "bench_narrow"


class _NarrowStore(_Store):
    """A durable write and nothing else: each request's click id and time, two columns of a
    table without index or key, group-committed as ``_Store`` commits the whole click."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {NARROW_TABLE} (id TEXT, created_at TEXT)")

    def write(self, requests: list[tuple[str, str, str]]) -> list[str]:
        created_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        rows = [(mint_click_id(), created_at) for _ in requests]
        self.db.execute("BEGIN IMMEDIATE")
        self.db.executemany(f"INSERT INTO {NARROW_TABLE} VALUES (?, ?)", rows)  # noqa: S608
        self.db.execute("COMMIT")
        return [
            f"https://offer.example.com/checkout?cid={click_id}&src=facebook&s1=abc"
            for click_id, _ in rows
        ]


async def sqlite_narrow_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        _store.append(_NarrowStore(os.environ["BENCH_SQLITE_DB"]))
        await _store_lifespan(_store[0], receive, send)
        return
    location = await _store[0].record("", "", "")
    headers = [(b"location", location.encode()), *_RAW_HEADERS[1:]]
    await send({"type": "http.response.start", "status": 302, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


# --- the bare postback store ------------------------------------------------------------------
# ``postback_store_app``: the raw ASGI function storing each postback of bench/postback.py with
# Python's sqlite3 alone (group-committed in a thread, the answer after the commit) into a
# migrated trilha database seeded as trilha's is: for each postback, in a savepoint of its own,
# the workspace by its token, the click, the conversion (its dedupe key UNIQUE), its first
# status-history row and the log entry with the request (token masked); and once a batch the
# outbox's look at the workspace's active destinations. No merchant, mapping, event types or
# anything else of trilha's pipeline: the floor of a durable postback, as the issue set it.
# ``postback_store_batched_app`` stores the same rows the way trilha's writer now does: no
# savepoint each, the workspace once a batch, and the history rows and log entries of the batch
# in one executemany each at its end; on PostgreSQL (BENCH_POSTGRES_URL) through psycopg.

_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
_CONVERSION_SQL = (
    "INSERT INTO conversions (id, workspace_id, click_id, raw_click_id, campaign_id, source_id,"
    " event_type, status, value_minor, currency, txid, dedupe_key, created_at,"
    " status_changed_at) VALUES (?, ?, ?, ?, ?, ?, 'SALE', ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (workspace_id, dedupe_key) DO NOTHING RETURNING id"
)
_HISTORY_SQL = (
    "INSERT INTO conversion_status_history (id, conversion_id, from_status, to_status,"
    " postback_id, actor, created_at) VALUES (?, ?, NULL, ?, ?, 'postback', ?)"
)
_LOG_SQL = (
    "INSERT INTO postback_log (id, workspace_id, received_at, method, path, query, headers, body,"
    " body_truncated, source_ip, auth_failed, outcome, reason, conversion_id, campaign_id,"
    " click_id, txid, event_type, status, value, currency, details, processing_us)"
    " VALUES (?, ?, ?, 'GET', ?, ?, ?, '', 0, ?, 0, 'created', '', ?, ?, ?, ?, 'SALE', ?, ?, ?,"
    " '{}', 0)"
)


_DESTINATIONS_SQL = (
    "SELECT id, event_types, statuses, campaign_id, source_id, sub_id FROM destinations"
    " WHERE workspace_id = ? AND status = 'active'"
)


class _PostbackStore(_Store):
    batched = False  # a savepoint and every statement for each postback

    def write(self, requests: list[tuple[str, str, str]]) -> list[str]:
        """requests: (query, headers as JSON, ip); the answer to each, once committed."""
        now = datetime.now(UTC).strftime(_TIME_FORMAT)
        answers = []
        self.db.execute("BEGIN IMMEDIATE")
        workspaces: dict[str, tuple[str, str]] = {}  # by token, batched: read once a batch
        history: list[tuple[str, ...]] = []
        entries: list[tuple[str, ...]] = []
        for query, headers, ip in requests:
            if not self.batched:
                self.db.execute("SAVEPOINT postback")
            fields = dict(parse_qsl(query))
            token = fields.pop("token", "")
            if token not in workspaces or not self.batched:
                found = self.db.execute(
                    "SELECT id, currency FROM workspaces WHERE postback_token = ?", (token,)
                ).fetchone()
                if token not in workspaces:
                    # The outbox: which destinations want its sales (none here), once a batch.
                    self.db.execute(_DESTINATIONS_SQL, (found[0],)).fetchall()
                workspaces[token] = found
            workspace_id, currency = workspaces[token]
            click_id = fields["click_id"]
            campaign_id, source_id = self.db.execute(
                "SELECT clicks.campaign_id, clicks.source_id FROM clicks"
                " JOIN campaigns ON campaigns.id = clicks.campaign_id"
                " WHERE campaigns.workspace_id = ? AND clicks.id = ?",
                (workspace_id, click_id),
            ).fetchone()
            conversion_id, postback_id = new_id(), new_id()
            value_minor = round(float(fields["value"]) * 100)
            self.db.execute(
                _CONVERSION_SQL,
                (
                    conversion_id,
                    workspace_id,
                    click_id,
                    click_id,
                    campaign_id,
                    source_id,
                    fields["status"],
                    value_minor,
                    currency,
                    fields["txid"],
                    f"tx:{fields['txid']}",
                    now,
                    now,
                ),
            ).fetchone()
            history.append((new_id(), conversion_id, fields["status"], postback_id, now))
            entries.append(
                (
                    postback_id,
                    workspace_id,
                    now,
                    "/postback",
                    query.replace(token, "********"),
                    headers,
                    ip,
                    conversion_id,
                    campaign_id,
                    click_id,
                    fields["txid"],
                    fields["status"],
                    fields["value"],
                    currency,
                )
            )
            if not self.batched:
                self.db.execute(_HISTORY_SQL, history.pop())
                self.db.execute(_LOG_SQL, entries.pop())
                self.db.execute("RELEASE postback")
            answers.append(
                json.dumps(
                    {
                        "status": "created",
                        "event": "SALE",
                        "conversion_id": conversion_id,
                        "conversion_status": fields["status"],
                        "postback_id": postback_id,
                    }
                )
            )
        if self.batched:  # the batch's history and log rows together, as trilha's writer
            self.db.executemany(_HISTORY_SQL, history)
            self.db.executemany(_LOG_SQL, entries)
        self.db.execute("COMMIT")
        return answers


class _Psycopg:
    """psycopg's connection taking the SQLite store's statements: ``?`` markers, SQLite's
    BEGIN, 0 for false."""

    def __init__(self, url: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)

    def execute(self, sql: str, parameters: Sequence[object] = ()) -> psycopg.Cursor[Any]:
        return self.conn.execute(_postgres_sql(sql), parameters)

    def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(_postgres_sql(sql), rows)


@lru_cache(maxsize=32)
def _postgres_sql(sql: str) -> str:
    sql = sql.replace("BEGIN IMMEDIATE", "BEGIN").replace("?", "%s")
    return sql.replace("'', 0, %s, 0, 'created'", "'', FALSE, %s, FALSE, 'created'")


class _BatchedPostbackStore(_PostbackStore):
    batched = True


class _PostgresPostbackStore(_BatchedPostbackStore):
    """The same postback store on PostgreSQL, through psycopg: one connection in a thread, as
    trilha's writer."""

    def __init__(self, url: str) -> None:  # SQLite's set-up (_Store's) does not apply
        self.db = _Psycopg(url)  # type: ignore[assignment]
        self.ready()


# --- the bare store on PostgreSQL -------------------------------------------------------------
# ``postgres_store_app``: ``sqlite_store_app``'s store on a migrated PostgreSQL database
# (BENCH_POSTGRES_URL) through psycopg, one connection in the writer thread as trilha's: the same
# rows, the visitor probe over the batch's keys as an array, the user agents with ON CONFLICT DO
# NOTHING, the same sums upserted, a commit, then the 302s. The floor of a durable click on
# PostgreSQL, what the driver and the database allow.

_RECENT_POSTGRES_SQL = (
    "SELECT keys.value FROM unnest(%s::bigint[]) AS keys (value) WHERE (SELECT 1 FROM clicks"
    " WHERE visitor_key = keys.value AND created_at > %s LIMIT 1) IS NOT NULL"
)
_AGENT_POSTGRES_SQL = (
    "INSERT INTO user_agents (key, agent) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING"
)
_COPY_SQL = f"COPY clicks ({_STORE_COLUMNS}) FROM STDIN"


class _PostgresStore(_Store):
    def __init__(self, url: str) -> None:  # SQLite's set-up (_Store's) does not apply
        self.postgres = _Psycopg(url)
        self.db = self.postgres  # type: ignore[assignment]  # BEGIN, the sums, COMMIT
        self.ready()

    def moment(self, now: datetime) -> object:
        return now  # a timestamptz

    def recent(self, visitors: list[int], since: object) -> set[int]:
        found = self.postgres.execute(_RECENT_POSTGRES_SQL, (sorted(visitors), since))
        return {key for (key,) in found}

    def store_agents(self, agents: list[tuple[int, str]]) -> None:
        self.postgres.executemany(_AGENT_POSTGRES_SQL, agents)

    def insert(self, rows: list[tuple[Any, ...]]) -> None:
        # The batch in one COPY, each row through psycopg's write_row (text format: its 0s and 1s
        # read as booleans), as trilha's writer sends its rows in one COPY. Storing batches of 64
        # and 200 clicks straight through write(), this was as fast as an executemany (which
        # psycopg already pipelines) at 64 and 1.5 times as fast at 200, and no slower than text
        # lines built by hand as trilha does (src/trilha/clicks.py, _copy).
        with self.postgres.conn.cursor() as cursor, cursor.copy(_COPY_SQL) as copy:
            for row in rows:
                copy.write_row(row)


async def postgres_store_app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        _store.append(_PostgresStore(os.environ["BENCH_POSTGRES_URL"]))
        await _store_lifespan(_store[0], receive, send)
        return
    await _redirect_stored(scope, send)


_postbacks: list[_PostbackStore] = []


async def postback_store_app(scope: Scope, receive: Receive, send: Send) -> None:
    await _postback_store(_PostbackStore, scope, receive, send)


async def postback_store_batched_app(scope: Scope, receive: Receive, send: Send) -> None:
    await _postback_store(_BatchedPostbackStore, scope, receive, send)


async def _postback_store(
    kind: type[_PostbackStore], scope: Scope, receive: Receive, send: Send
) -> None:
    if scope["type"] == "lifespan":
        postgres = os.environ.get("BENCH_POSTGRES_URL")
        store = _PostgresPostbackStore(postgres) if postgres else None
        _postbacks.append(store or kind(os.environ["BENCH_SQLITE_DB"]))
        await _store_lifespan(_postbacks[0], receive, send)
        return
    headers = json.dumps([[k.decode("latin-1"), v.decode("latin-1")] for k, v in scope["headers"]])
    answer = await _postbacks[0].record(scope["query_string"].decode(), headers, scope["client"][0])
    body = answer.encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
