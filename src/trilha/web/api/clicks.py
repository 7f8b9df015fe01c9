"""/workspaces/{id}/clicks: stored clicks, newest first, read page by page."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from trilha import clicks
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, AwareUtcDatetime, ClickOut, ClickPage
from trilha.web.auth import Db

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/clicks",
    tags=["clicks"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List clicks, newest first, a page at a time")
async def list_clicks(
    membership: InWorkspace,
    conn: Db,
    since: Annotated[
        AwareUtcDatetime | None, Query(description="From this time on, e.g. 2024-05-01T00:00-03:00")
    ] = None,
    until: Annotated[AwareUtcDatetime | None, Query(description="Before this time")] = None,
    campaign_id: str | None = None,
    click_id: str | None = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Clicks per page")] = 100,
    before: Annotated[str | None, Query(description="`next_before` of the previous page")] = None,
) -> ClickPage:
    # One more than asked tells whether another page follows.
    found = await clicks.list_clicks(
        conn,
        membership.workspace.id,
        since=since,
        until=until,
        campaign_id=campaign_id,
        click_id=click_id,
        before_id=before,
        limit=limit + 1,
    )
    page = [ClickOut.model_validate(row) for row in found[:limit]]
    return ClickPage(clicks=page, next_before=page[-1].id if len(found) > limit else None)


@router.get("/{click_id}", summary="A click")
async def get_click(click_id: str, membership: InWorkspace, conn: Db) -> ClickOut:
    return ClickOut.model_validate(await clicks.get_click(conn, membership.workspace.id, click_id))
