"""What a report may cost: a few at once per workspace in each process, each within a time limit.

Any member or API key can ask for a heavy report; without these bounds a handful of them at once
would take the processor, the database and its connections from the clicks. A report waits
briefly for one of its workspace's turns, else it is refused (TooManyRequests, 429); its queries
stop at the time limit (ReportTimedOut, 503).

With TRILHA_REPORTS_DATABASE_URL set, every report runs here on that replica, in a transaction
of its own, instead of on the request's connection to the primary: a report shows what the
replica has replayed so far (see docs/install.md, "Several machines").
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.errors import ReportTimedOut, StorageUnavailable, TooManyRequests
from trilha.metrics import REPORT_SECONDS

P = ParamSpec("P")
T = TypeVar("T")

# SQLite calls the deadline check every this many virtual machine steps (a few milliseconds'
# work): rarely enough that the check, which needs Python's lock, costs nothing measurable.
SQLITE_CHECK_STEPS = 100_000
QUERY_CANCELED = "57014"  # PostgreSQL's SQLSTATE for a statement stopped by statement_timeout
# A report that ran out of time would only take the time again at once.
TIMED_OUT_RETRY_AFTER = 60


class ReportLimiter:
    """Turns for reports, per workspace, in this process."""

    def __init__(
        self,
        *,
        at_once: int,
        queue_wait: float,
        time_limit: float,
        engine: AsyncEngine | None = None,
    ) -> None:
        self.at_once = at_once
        self.queue_wait = queue_wait
        self.time_limit = time_limit
        self.engine = engine  # the reports' replica; None: the request's own connection
        self._turns: dict[str, asyncio.Semaphore] = {}
        self._holders: dict[str, int] = {}  # running or waiting, to drop an idle workspace's turns

    async def run(
        self,
        conn: AsyncConnection,
        workspace_id: str,
        report: Callable[Concatenate[Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """``report(conn, *args, **kwargs)`` in one of the workspace's turns, within the time
        limit; on the replica instead of ``conn`` when there is one."""
        started = time.perf_counter()
        try:
            async with self.turn(workspace_id):
                if self.engine is None:
                    return await self._limited(conn, report, *args, **kwargs)
                return await self._on_replica(self.engine, report, *args, **kwargs)
        finally:
            REPORT_SECONDS.labels(report.__name__).observe(time.perf_counter() - started)

    async def _on_replica(
        self,
        engine: AsyncEngine,
        report: Callable[Concatenate[Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """The report in a transaction of its own on the replica, taken once the turn is (a
        report waiting for one holds no connection). A replica that cannot be reached, or whose
        replay cancelled the report (a conflict with recovery), answers 503."""
        try:
            async with engine.begin() as replica:
                return await self._limited(replica, report, *args, **kwargs)
        except (OperationalError, OSError):
            raise StorageUnavailable(
                "the reports' database (a replica) did not answer; try again shortly"
            ) from None

    async def _limited(
        self,
        conn: AsyncConnection,
        report: Callable[Concatenate[Connection, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        async with time_limited(conn, self.time_limit):
            return await conn.run_sync(report, *args, **kwargs)

    @asynccontextmanager
    async def turn(self, workspace_id: str) -> AsyncIterator[None]:
        turns = self._turns.setdefault(workspace_id, asyncio.Semaphore(self.at_once))
        self._holders[workspace_id] = self._holders.get(workspace_id, 0) + 1
        try:
            try:
                async with asyncio.timeout(self.queue_wait):
                    await turns.acquire()
            except TimeoutError:
                raise TooManyRequests(
                    f"this workspace already runs {self.at_once} reports at once, its limit; "
                    "try again shortly",
                    # Every running report has finished or stopped by then.
                    retry_after=math.ceil(self.time_limit),
                ) from None
            try:
                yield
            finally:
                turns.release()
        finally:
            self._holders[workspace_id] -= 1
            if not self._holders[workspace_id]:
                del self._holders[workspace_id], self._turns[workspace_id]


@asynccontextmanager
async def time_limited(conn: AsyncConnection, seconds: float) -> AsyncIterator[None]:
    """ReportTimedOut when the statements run inside take longer than ``seconds``: on PostgreSQL
    each statement, on SQLite all of them together."""
    try:
        if conn.dialect.name == "postgresql":
            milliseconds = str(max(1, round(seconds * 1000)))
            # Local to the transaction: the connection goes back to the pool without it.
            await conn.execute(
                text("SELECT set_config('statement_timeout', :ms, true)"), {"ms": milliseconds}
            )
            yield
        else:
            async with _sqlite_deadline(conn, seconds):
                yield
    except DBAPIError as exc:
        if not _timed_out(exc):
            raise
        raise ReportTimedOut(
            "the report ran past its time limit and was stopped; "
            "choose a shorter period, fewer levels or a filter",
            retry_after=TIMED_OUT_RETRY_AFTER,
        ) from None


@asynccontextmanager
async def _sqlite_deadline(conn: AsyncConnection, seconds: float) -> AsyncIterator[None]:
    deadline = time.monotonic() + seconds
    driver = (await conn.get_raw_connection()).driver_connection
    # A true answer makes SQLite interrupt the running statement ("interrupted").
    await driver.set_progress_handler(  # type: ignore[union-attr]
        lambda: time.monotonic() > deadline, SQLITE_CHECK_STEPS
    )
    try:
        yield
    finally:
        await driver.set_progress_handler(None, 0)  # type: ignore[union-attr]


def _timed_out(exc: DBAPIError) -> bool:
    if getattr(exc.orig, "sqlstate", None) == QUERY_CANCELED:
        return True
    return str(exc.orig) == "interrupted"
