"""Group commit for clicks: one task writes every click that arrived while the last commit ran.

Each redirect waits for the commit that holds its click, so a 302 is never sent for a click that
was not stored; throughput comes from batching, not from skipping durability. A batch starts as
soon as the previous commit ends (a fixed waiting window measured slower).

On SQLite a batch runs whole in one thread of the writer's own, on a blocking connection to the
same file: aiosqlite would hand every statement to its thread and back three or four times, and
those hand-overs cost about as much as the batch's own SQL (see docs/performance.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, CursorResult, Dialect, Engine, Executable
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.clicks import ClickRequest, build_click, offer_url, record_clicks
from trilha.db.engine import blocking_sqlite_engine, is_sqlite
from trilha.errors import StorageUnavailable
from trilha.ids import mint_click_id
from trilha.links import Fallback, Link, resolve_link

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_BATCH = 2000
SQLITE_CHECKPOINT_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class Redirect:
    location: str
    click_id: str


Outcome = Redirect | Fallback


class ClickWriter:
    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._pending: list[tuple[ClickRequest, asyncio.Future[Outcome]]] = []
        self._wakeup = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        # SQLite only: the blocking connection and the one thread batches run in.
        self._blocking: Engine | None = None
        self._thread: ThreadPoolExecutor | None = None

    def start(self) -> None:
        if is_sqlite(self._engine):
            self._blocking = blocking_sqlite_engine(self._engine)
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="click-writer")
            self._tasks.append(asyncio.create_task(self._checkpoint(), name="sqlite-checkpoint"))
        self._tasks.append(asyncio.create_task(self._run(), name="click-writer"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        if self._thread is not None and self._blocking is not None:
            # Queued behind a batch still committing, if any.
            await asyncio.get_running_loop().run_in_executor(self._thread, self._blocking.dispose)
            self._thread.shutdown()
            self._thread = self._blocking = None
        for _, future in self._pending:
            future.set_exception(StorageUnavailable("the server is shutting down"))
        self._pending.clear()

    async def record(self, request: ClickRequest) -> Outcome:
        """Store the click (or find why there is none) and return where the visitor goes."""
        if not self._tasks:
            raise StorageUnavailable("the click writer is not running")
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        self._wakeup.set()
        return await future

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            if not self._pending:
                self._wakeup.clear()
            try:
                outcomes = await self._commit([request for request, _ in batch])
            except (SQLAlchemyError, OSError) as exc:
                log.error("click batch of %d not stored: %s", len(batch), type(exc).__name__)
                error = StorageUnavailable("the click could not be stored")
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (_, future), outcome in zip(batch, outcomes, strict=True):
                if not future.done():
                    future.set_result(outcome)

    async def _commit(self, requests: list[ClickRequest]) -> list[Outcome]:
        if self._thread is None or self._blocking is None:
            async with self._engine.begin() as conn:
                return await _write_batch(conn, requests)
        blocking = self._blocking

        def commit() -> list[Outcome]:
            with blocking.begin() as conn:
                return _run_blocking(_write_batch(_as_async(conn), requests))

        return await asyncio.get_running_loop().run_in_executor(self._thread, commit)

    async def _checkpoint(self) -> None:
        # Automatic checkpoints are off (see db.engine): they would run inside a click commit.
        while True:
            await asyncio.sleep(SQLITE_CHECKPOINT_INTERVAL)
            try:
                async with self._engine.connect() as conn:
                    raw = await conn.get_raw_connection()
                    await raw.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)")  # type: ignore[union-attr]
            except (SQLAlchemyError, OSError) as exc:
                log.warning("sqlite checkpoint failed: %s", type(exc).__name__)


async def _write_batch(conn: AsyncConnection, requests: list[ClickRequest]) -> list[Outcome]:
    targets: dict[tuple[str, str], Link | Fallback] = {}
    for request in requests:
        key = (request.host, request.slug)
        if key not in targets:
            targets[key] = await resolve_link(conn, host=request.host, slug=request.slug)
    to_record = [
        (target, request)
        for request in requests
        if isinstance(target := targets[(request.host, request.slug)], Link)
    ]
    rows = iter(await record_clicks(conn, to_record))
    outcomes: list[Outcome] = []
    for request in requests:
        target = targets[(request.host, request.slug)]
        if isinstance(target, Fallback):
            outcomes.append(target)
        else:
            row = next(rows)
            outcomes.append(Redirect(offer_url(target, row, request.params), row["id"]))
    return outcomes


async def preview_redirect(conn: AsyncConnection, request: ClickRequest) -> Outcome:
    """What a click would do, recording nothing (HEAD requests from link-preview bots)."""
    target = await resolve_link(conn, host=request.host, slug=request.slug)
    if isinstance(target, Fallback):
        return target
    row = build_click(target, request, click_id=mint_click_id(), is_unique=False)
    return Redirect(offer_url(target, row, request.params), row["id"])


class _BlockingConnection:
    """The part of AsyncConnection a batch uses, over a blocking Connection: its awaits never
    suspend, so the batch's coroutine runs to its end in one step (see _run_blocking)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    @property
    def dialect(self) -> Dialect:
        return self._conn.dialect

    async def execute(
        self,
        statement: Executable,
        parameters: Sequence[dict[str, Any]] | dict[str, Any] | None = None,
    ) -> CursorResult[Any]:
        return self._conn.execute(statement, parameters)


def _as_async(conn: Connection) -> AsyncConnection:
    return cast(AsyncConnection, _BlockingConnection(conn))


def _run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends to its end, outside any event loop."""
    try:
        coro.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coro.close()
    raise RuntimeError("a blocking click batch tried to suspend")
