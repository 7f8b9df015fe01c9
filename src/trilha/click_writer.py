"""Clicks are stored by group commit (see trilha.group_commit): each redirect waits for the
commit that holds its click, so a 302 is never sent for a click that was not stored."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from trilha.clicks import ClickRequest, build_click, offer_url, record_clicks
from trilha.db.driver import as_async, run_blocking
from trilha.group_commit import BlockingWriter, GroupCommit
from trilha.ids import mint_click_id
from trilha.links import Fallback, Link, resolve_link


@dataclass(frozen=True, slots=True)
class Redirect:
    location: str
    click_id: str


Outcome = Redirect | Fallback


class ClickWriter:
    def __init__(self, writer: BlockingWriter) -> None:
        self._writer = writer
        self._group: GroupCommit[ClickRequest, Outcome] = GroupCommit("click writer", self._commit)

    def start(self) -> None:
        self._group.start()

    async def stop(self) -> None:
        await self._group.stop()

    async def record(self, request: ClickRequest) -> Outcome:
        """Store the click (or find why there is none) and return where the visitor goes."""
        return await self._group.submit(request)

    async def preview(self, request: ClickRequest) -> Outcome:
        """What a click would do, recording nothing (HEAD requests from link-preview bots)."""
        return await self._writer.transaction(lambda conn: _preview(conn, request))

    async def _commit(self, requests: list[ClickRequest]) -> list[Outcome]:
        return await self._writer.transaction(lambda conn: _write_batch(conn, requests))


def _targets(
    conn: Connection, requests: list[ClickRequest]
) -> dict[tuple[str, str], Link | Fallback]:
    """The link behind each distinct host and slug of the batch, read in its transaction, so
    that a campaign edit applies to the very next click."""
    targets: dict[tuple[str, str], Link | Fallback] = {}
    for request in requests:
        key = (request.host, request.slug)
        if key not in targets:
            link = resolve_link(as_async(conn), host=request.host, slug=request.slug)
            targets[key] = run_blocking(link)
    return targets


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
        visitor_key=request.visitor.key,
        is_unique=False,
    )
    return Redirect(offer_url(target, row, request.params), row["id"])
