"""Group commit for clicks: one task writes every click that arrived while the last commit ran.

Each redirect waits for the commit that holds its click, so a 302 is never sent for a click that
was not stored; throughput comes from batching, not from skipping durability. A batch starts as
soon as the previous commit ends (a fixed waiting window measured slower).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.clicks import ClickRequest, build_click, offer_url, record_clicks
from trilha.errors import StorageUnavailable
from trilha.ids import mint_click_id
from trilha.links import Fallback, Link, resolve_link

log = logging.getLogger(__name__)

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

    def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._run(), name="click-writer"))
        if self._engine.dialect.name == "sqlite":
            self._tasks.append(asyncio.create_task(self._checkpoint(), name="sqlite-checkpoint"))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
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
                async with self._engine.begin() as conn:
                    outcomes = await _write_batch(conn, [request for request, _ in batch])
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
