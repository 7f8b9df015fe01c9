"""Clicks are stored by group commit (see trilha.group_commit): each redirect waits for the
commit that holds its click, so a 302 is never sent for a click that was not stored.

A batch is written in one go (one COPY on PostgreSQL). When one of its statements fails, the
batch's transaction is rolled back, before any commit, and its clicks are written again one by
one, each in a savepoint of one transaction: a click that cannot be stored costs only itself,
and none is stored twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from trilha.clicks import ClickRequest, build_click, offer_url, record_clicks
from trilha.db.driver import driver_cursor
from trilha.errors import StorageUnavailable
from trilha.group_commit import BlockingWriter, GroupCommit
from trilha.ids import mint_click_id
from trilha.links import Fallback, Link, resolve_link
from trilha.metrics import CLICKS, Writer


class Redirect(NamedTuple):
    """Where the click's visitor goes (a NamedTuple, as ClickRequest is: one every click)."""

    location: str
    click_id: str


Outcome = Redirect | Fallback

log = logging.getLogger(__name__)


class _BatchFailed(Exception):
    """A statement of the batch failed: its transaction is rolled back, nothing was committed."""


class ClickWriter:
    def __init__(self, writer: BlockingWriter) -> None:
        self._writer = writer
        self._group: GroupCommit[ClickRequest, Outcome] = GroupCommit(Writer.CLICK, self._commit)
        # Store the click (or find why there is none) and return where the visitor goes: the
        # group commit's own submit, with no coroutine of this class's in between (every click).
        self.record: Callable[[ClickRequest], Awaitable[Outcome]] = self._group.submit

    def start(self) -> None:
        self._group.start()

    async def stop(self) -> None:
        await self._group.stop()

    async def preview(self, request: ClickRequest) -> Outcome:
        """What a click would do, recording nothing (HEAD requests from link-preview bots)."""
        return await self._writer.transaction(lambda conn: _preview(conn, request))

    async def _commit(self, requests: list[ClickRequest]) -> Sequence[Outcome | Exception]:
        outcomes: Sequence[Outcome | Exception]
        try:
            outcomes = await self._writer.transaction(lambda conn: _whole_batch(conn, requests))
        except _BatchFailed as failed:
            log.warning(
                "click writer: batch of %d failed (%s); storing its clicks one by one",
                len(requests),
                type(failed.__cause__).__name__,
            )
            outcomes = await self._writer.transaction(lambda conn: _one_by_one(conn, requests))
        CLICKS.inc(sum(isinstance(outcome, Redirect) for outcome in outcomes))
        return outcomes


def _targets(
    conn: Connection, requests: list[ClickRequest]
) -> dict[tuple[str, str], Link | Fallback]:
    """The link behind each distinct host and slug of the batch, read in its transaction, so
    that a campaign edit applies to the very next click."""
    targets: dict[tuple[str, str], Link | Fallback] = {}
    for request in requests:
        key = (request.host, request.slug)
        if key not in targets:
            targets[key] = resolve_link(conn, host=request.host, slug=request.slug)
    return targets


def _whole_batch(conn: Connection, requests: list[ClickRequest]) -> Sequence[Outcome]:
    try:
        return _write_batch(conn, requests)
    except Exception as exc:  # any fault in one click: found and kept to it by _one_by_one
        if conn.invalidated:  # the database is gone: no point in trying each click
            raise
        raise _BatchFailed from exc


def _one_by_one(conn: Connection, requests: list[ClickRequest]) -> list[Outcome | Exception]:
    """Each click in a savepoint of its own (on the driver's cursor, as the postback writer
    does); one that fails is rolled back alone and answered with its error."""
    cursor = driver_cursor(conn)
    outcomes: list[Outcome | Exception] = []
    for request in requests:
        cursor.execute("SAVEPOINT click")
        outcome: Outcome | Exception
        try:
            [outcome] = _write_batch(conn, [request])
        except SQLAlchemyError as exc:
            if conn.invalidated:
                raise
            cursor.execute("ROLLBACK TO SAVEPOINT click")
            log.error("click not stored: %s", _reason(exc))
            outcome = StorageUnavailable("the click could not be stored")
        except Exception as exc:  # a fault in one click must not sink the others
            cursor.execute("ROLLBACK TO SAVEPOINT click")
            log.exception("click failed")
            outcome = exc
        cursor.execute("RELEASE SAVEPOINT click")
        outcomes.append(outcome)
    return outcomes


def _reason(exc: SQLAlchemyError) -> str:
    """The database's message (its first line: see db.driver.without_detail)."""
    if isinstance(exc, DBAPIError):
        return f"{type(exc.orig).__name__}: {exc.orig}"
    return type(exc).__name__


def _write_batch(conn: Connection, requests: list[ClickRequest]) -> list[Outcome]:
    targets = _targets(conn, requests)
    to_record = [
        (target, request)
        for request in requests
        if isinstance(target := targets[(request.host, request.slug)], Link)
    ]
    rows = iter(record_clicks(conn, to_record))
    outcomes: list[Outcome] = []
    for request in requests:
        target = targets[(request.host, request.slug)]
        if isinstance(target, Fallback):
            outcomes.append(target)
        else:
            row = next(rows)
            outcomes.append(Redirect(offer_url(target, row, request.params), row["id"]))
    return outcomes


def _preview(conn: Connection, request: ClickRequest) -> Outcome:
    target = _targets(conn, [request])[(request.host, request.slug)]
    if isinstance(target, Fallback):
        return target
    row = build_click(
        target,
        request,
        click_id=mint_click_id(),
        visitor_key=request.visitor.key(target.campaign_id),
        is_unique=False,
    )
    return Redirect(offer_url(target, row, request.params), row["id"])
