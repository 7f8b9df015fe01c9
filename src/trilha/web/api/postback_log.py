"""/workspaces/{id}/postbacks: every postback as received (secrets masked), and replaying them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from trilha.conversions.outcome import Outcome
from trilha.errors import NotFound
from trilha.postbacks import replay
from trilha.postbacks.log import LogFilter, get_log_entry, list_log
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.postback_schemas import (
    PostbackDetail,
    PostbackOut,
    PostbackPage,
    ReplayIn,
    ReplayOut,
)
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, AwareUtcDatetime
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/postbacks",
    tags=["postback log"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List received postbacks, newest first, a page at a time")
async def list_postbacks(
    membership: InWorkspace,
    conn: Db,
    outcome: Outcome | None = None,
    merchant_id: str | None = None,
    campaign_id: str | None = None,
    click_id: Annotated[str | None, Query(description="The click id the request carried")] = None,
    txid: str | None = None,
    since: Annotated[
        AwareUtcDatetime | None, Query(description="From this time on, e.g. 2024-05-01T00:00-03:00")
    ] = None,
    until: Annotated[AwareUtcDatetime | None, Query(description="Before this time")] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Entries per page")] = 100,
    before: Annotated[str | None, Query(description="`next_before` of the previous page")] = None,
) -> PostbackPage:
    where = LogFilter(
        outcome=outcome,
        merchant_id=merchant_id,
        campaign_id=campaign_id,
        click_id=click_id,
        txid=txid,
        since=since,
        until=until,
        before_id=before,
    )
    # One more than asked tells whether another page follows.
    found = await list_log(conn, membership.workspace.id, where, limit=limit + 1)
    page = [PostbackOut.model_validate(entry) for entry in found[:limit]]
    return PostbackPage(postbacks=page, next_before=page[-1].id if len(found) > limit else None)


@router.get("/{postback_id}", summary="A received postback, with its request (secrets masked)")
async def get_postback(postback_id: str, membership: InWorkspace, conn: Db) -> PostbackDetail:
    entry = await get_log_entry(conn, membership.workspace.id, postback_id)
    if entry is None:
        raise NotFound("postback not found")
    return PostbackDetail.model_validate(entry)


@router.post(
    "/replay",
    summary="Run invalid or orphan postbacks through the pipeline again, after a fix",
)
async def replay_postbacks(body: ReplayIn, membership: InWorkspace, conn: Db) -> list[ReplayOut]:
    membership.require(Role.MEMBER)
    results = await replay.replay_postbacks(
        conn, membership.workspace.id, body.ids, now=datetime.now(UTC)
    )
    return [
        ReplayOut(
            replay_of=entry_id,
            outcome=result.outcome,
            reason=result.reason,
            conversion_id=result.conversion_id,
            postback_id=result.postback_id,
        )
        for entry_id, result in zip(body.ids, results, strict=True)
    ]
