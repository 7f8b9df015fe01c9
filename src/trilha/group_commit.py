"""Group commit: every job that arrived while the last commit ran goes into the next one.

Each caller waits for the commit that holds its job, so nothing is answered before it is stored;
throughput comes from sharing one commit (one fsync) among many jobs, not from skipping
durability. A batch starts as soon as the previous commit ends (a fixed waiting window measured
slower).

Every batch runs whole in one thread of its own, on one blocking connection (``BlockingWriter``):
on SQLite aiosqlite would hand every statement to its thread and back three or four times, and
on PostgreSQL SQLAlchemy's async layer switches greenlets around every statement; those costs
come close to the batch's own SQL (see docs/performance.md). On SQLite, click and postback
batches queue behind each other there, which is what SQLite's single write lock would make them
do anyway; on PostgreSQL postbacks have a writer of their own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.db.engine import blocking_engine, is_sqlite
from trilha.errors import StorageUnavailable
from trilha.metrics import BATCH_SIZE, COMMIT_SECONDS, Writer

log = logging.getLogger(__name__)

J = TypeVar("J")
R = TypeVar("R")
T = TypeVar("T")

MAX_BATCH = 2000
SQLITE_CHECKPOINT_INTERVAL = 1.0


class GroupCommit(Generic[J, R]):
    """Queue jobs; ``commit`` stores a batch of them in one transaction and returns one result
    (or the exception that job alone failed with) per job, in order."""

    def __init__(
        self, writer: Writer, commit: Callable[[list[J]], Awaitable[Sequence[R | Exception]]]
    ) -> None:
        self._name = f"{writer} writer"
        self._batch_size = BATCH_SIZE[writer]
        self._commit_seconds = COMMIT_SECONDS[writer]
        self._commit = commit
        self._pending: list[tuple[J, asyncio.Future[R]]] = []
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self._name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for _, future in self._pending:
            future.set_exception(StorageUnavailable("the server is shutting down"))
        self._pending.clear()

    async def submit(self, job: J) -> R:
        """Wait until the job is committed; its result, or StorageUnavailable."""
        if self._task is None:
            raise StorageUnavailable(f"the {self._name} is not running")
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._pending.append((job, future))
        self._wakeup.set()
        return await future

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            if not self._pending:
                self._wakeup.clear()
            started = time.perf_counter()
            try:
                results = await self._commit([job for job, _ in batch])
            except (SQLAlchemyError, OSError, StorageUnavailable) as exc:
                log.error(
                    "%s: batch of %d not stored: %s", self._name, len(batch), type(exc).__name__
                )
                results = [StorageUnavailable("not stored")] * len(batch)
            except Exception as exc:  # a fault must reach the callers, not end the writer
                log.exception("%s: batch of %d failed", self._name, len(batch))
                results = [exc] * len(batch)
            self._commit_seconds.observe(time.perf_counter() - started)
            self._batch_size.observe(len(batch))
            for (_, future), result in zip(batch, results, strict=True):
                if future.done():  # its caller went away
                    continue
                if isinstance(result, Exception):
                    future.set_exception(result)
                else:
                    future.set_result(result)


class BlockingWriter:
    """A thread that runs write batches one after the other, on one blocking connection it
    keeps; on SQLite also the background checkpoints (automatic ones are off, see db.engine:
    they would run inside a commit)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._blocking: Engine | None = None
        self._connection: Connection | None = None  # used in the writer's thread only
        self._thread: ThreadPoolExecutor | None = None
        self._checkpoints: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._blocking = blocking_engine(self._engine)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="writer")
        if is_sqlite(self._engine):
            self._checkpoints = asyncio.create_task(self._checkpoint(), name="sqlite-checkpoint")

    async def stop(self) -> None:
        if self._checkpoints is not None:
            self._checkpoints.cancel()
            await asyncio.gather(self._checkpoints, return_exceptions=True)
            self._checkpoints = None
        if self._thread is not None and self._blocking is not None:
            # Queued behind a batch still committing, if any.
            await asyncio.get_running_loop().run_in_executor(self._thread, self._close)
            self._thread.shutdown()
            self._thread = self._blocking = None

    async def transaction(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in the writer's thread inside one transaction, committed when it returns."""
        if self._thread is None:
            raise StorageUnavailable("the writer is not running")

        def run() -> T:
            # A connection the database dropped is invalidated by the failing statement, and
            # the next begin() opens a new one.
            conn = self._connect()
            with conn.begin():
                return work(conn)

        return await asyncio.get_running_loop().run_in_executor(self._thread, run)

    def _connect(self) -> Connection:
        """The writer's one connection, kept from batch to batch: checking a connection out of
        the pool for each batch (and, on PostgreSQL, pinging it) cost more than the batch's
        own statements."""
        if self._connection is None:
            if self._blocking is None:
                raise StorageUnavailable("the writer is not running")
            self._connection = self._blocking.connect()
        return self._connection

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._blocking is not None:
            self._blocking.dispose()

    async def _checkpoint(self) -> None:
        while True:
            await asyncio.sleep(SQLITE_CHECKPOINT_INTERVAL)
            try:
                async with self._engine.connect() as conn:
                    raw = await conn.get_raw_connection()
                    await raw.driver_connection.execute("PRAGMA wal_checkpoint(PASSIVE)")  # type: ignore[union-attr]
            except (SQLAlchemyError, OSError) as exc:
                log.warning("sqlite checkpoint failed: %s", type(exc).__name__)
