"""Where a postback's transaction runs.

Postbacks are stored by group commit (see trilha.group_commit) in a writer thread, each in a
savepoint of its own: a postback that fails rolls back alone, and the others of its batch still
commit. Each request is answered only after the commit that holds it. On SQLite that is the
file's one writer thread, which clicks use too; on PostgreSQL postbacks have a writer thread and
connection of their own, so that clicks never wait behind them.

On PostgreSQL, batches in two worker processes could lock the same dedupe keys in opposite
orders; PostgreSQL then aborts one of the two statements, and that postback alone rolls back to
its savepoint and is answered 503, for the platform to send again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from sqlalchemy import Connection
from sqlalchemy.exc import SQLAlchemyError

from trilha.db.driver import Cursor, driver_cursor
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
    def write(conn: Connection) -> list[Result | Exception]:
        reads = SetupReads()
        return [_in_savepoint(conn, received, reads) for received in batch]

    results = await writer.transaction(write)
    if on_commit is not None and any(isinstance(r, Result) and r.enqueued for r in results):
        on_commit()
    for result in results:
        if isinstance(result, Result):
            count_postback(result.outcome, result.platform)
    return results


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
