"""Where a postback's transaction runs.

Postbacks are stored by group commit (see trilha.group_commit) in a writer thread, a batch in one
transaction. Should one of them fail, the batch is rolled back and stored again, each postback in
a savepoint of its own: the one that fails rolls back alone, and the others still commit. Each
request is answered only after the commit that holds it. On SQLite that is the file's one writer
thread, which clicks use too; on PostgreSQL postbacks have a writer thread and connection of
their own, so that clicks never wait behind them.

On PostgreSQL, batches in two worker processes could lock the same dedupe keys in opposite
orders; PostgreSQL then aborts one of the two statements: the batch is stored again one by one,
and a postback that still fails rolls back to its savepoint and is answered 503, for the
platform to send again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError

from trilha.db.driver import Cursor, deferred_inserts, driver_cursor
from trilha.errors import StorageUnavailable
from trilha.group_commit import BlockingWriter, GroupCommit
from trilha.metrics import Writer, count_postback
from trilha.postbacks.payload import Received
from trilha.postbacks.receive import SetupReads, receive_postback
from trilha.postbacks.result import Result

log = logging.getLogger(__name__)


class PostbackWriter:
    def __init__(
        self, writer: BlockingWriter, *, on_commit: Callable[[], None] | None = None
    ) -> None:
        """``on_commit``: called in the event loop after a batch that queued deliveries
        commits (the worker looks at the outbox at once; a batch that queued none need not
        wake it)."""
        self._group: GroupCommit[Received, Result] = GroupCommit(
            Writer.POSTBACK, partial(_commit, writer, on_commit)
        )

    def start(self) -> None:
        self._group.start()

    async def stop(self) -> None:
        await self._group.stop()

    async def receive(self, received: Received) -> Result:
        """Process and store one postback with its log entry; the result once committed."""
        return await self._group.submit(received)


async def _commit(
    writer: BlockingWriter, on_commit: Callable[[], None] | None, batch: list[Received]
) -> list[Result | Exception]:
    try:
        results = await writer.transaction(lambda conn: _whole_batch(conn, batch))
    except _BatchFailed as failed:
        log.warning(
            "postback writer: batch of %d failed (%s); storing its postbacks one by one",
            len(batch),
            type(failed.__cause__).__name__,
        )
        results = await writer.transaction(lambda conn: _one_by_one(conn, batch))
    if on_commit is not None and any(isinstance(r, Result) and r.enqueued for r in results):
        on_commit()
    for result in results:
        if isinstance(result, Result):
            count_postback(result.outcome, result.platform)
    return results


class _BatchFailed(Exception):
    """A postback of the batch failed: the batch is stored again, each in a savepoint."""


def _whole_batch(conn: Connection, batch: list[Received]) -> list[Result | Exception]:
    """The batch's postbacks one after the other, with no savepoint each, their status history
    and log rows inserted together at the end: on PostgreSQL two round trips a postback instead
    of six. Should one fail, its whole transaction rolls back and ``_one_by_one`` stores them
    again, where a failure stays its postback's."""
    reads = SetupReads()
    try:
        with deferred_inserts(conn):  # the status history's and the log's rows, at the end
            return [receive_postback(conn, received, reads=reads) for received in batch]
    except Exception as exc:  # any fault in one postback: found and kept to it by _one_by_one
        if conn.invalidated:  # the database is gone: no point in trying each postback
            raise
        raise _BatchFailed from exc


def _one_by_one(conn: Connection, batch: list[Received]) -> list[Result | Exception]:
    reads = SetupReads()
    return [_in_savepoint(conn, received, reads) for received in batch]


def _in_savepoint(conn: Connection, received: Received, reads: SetupReads) -> Result | Exception:
    """One postback in a savepoint of the batch's transaction, taken on the driver's cursor:
    SQLAlchemy's nested transaction cost as much as two of the postback's statements."""
    cursor = driver_cursor(conn)
    cursor.execute("SAVEPOINT postback")
    try:
        result = receive_postback(conn, received, reads=reads)
    except SQLAlchemyError as exc:
        _roll_back(cursor)
        log.error("postback not stored: %s", type(exc).__name__)
        return StorageUnavailable("the postback could not be stored")
    except Exception as exc:  # a fault in one postback must not sink its batch
        _roll_back(cursor)
        log.exception("postback failed")
        return exc
    cursor.execute("RELEASE SAVEPOINT postback")
    return result


def _roll_back(cursor: Cursor) -> None:
    cursor.execute("ROLLBACK TO SAVEPOINT postback")
    cursor.execute("RELEASE SAVEPOINT postback")
