"""/workspaces/{id}/clicks: the click log, newest first, filtered and read page by page, each
click with what it converted to."""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query

from trilha import click_log
from trilha.click_log import ClickFilter
from trilha.web.api.click_schemas import ClickDetailOut, ClickPage, LoggedClickOut
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, AwareUtcDatetime
from trilha.web.auth import Db

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/clicks",
    tags=["clicks"],
    responses=AUTH_ERRORS | NOT_FOUND,
)
Text = Annotated[str | None, Query(max_length=200)]


@router.get("", summary="The click log: clicks, newest first, a page at a time")
async def list_clicks(
    membership: InWorkspace,
    conn: Db,
    since: Annotated[
        AwareUtcDatetime | None, Query(description="From this time on, e.g. 2024-05-01T00:00-03:00")
    ] = None,
    until: Annotated[AwareUtcDatetime | None, Query(description="Before this time")] = None,
    from_day: Annotated[
        date | None,
        Query(description="From this day on, e.g. 2024-05-01, on the workspace's clock"),
    ] = None,
    to_day: Annotated[
        date | None, Query(description="Up to this day, included, on the workspace's clock")
    ] = None,
    campaign_id: Text = None,
    source_id: Text = None,
    click_id: Text = None,
    country: Annotated[str | None, Query(max_length=2, description="e.g. BR")] = None,
    device_type: Annotated[
        str | None, Query(max_length=16, description="desktop, mobile, tablet, ...")
    ] = None,
    is_bot: Annotated[bool | None, Query(description="true: only bots; false: only people")] = None,
    converted: Annotated[
        bool | None, Query(description="true: only clicks with a conversion; false: only without")
    ] = None,
    sub: Annotated[
        list[str] | None,
        Query(max_length=10, description="sub1..sub10 filters as `name:value`, e.g. sub1:fb-01"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=click_log.MAX_PAGE, description="Clicks per page")] = 100,
    before: Annotated[str | None, Query(description="`next_before` of the previous page")] = None,
) -> ClickPage:
    where = ClickFilter(
        campaign_id=campaign_id,
        source_id=source_id,
        country=country,
        device_type=device_type,
        subs=click_log.sub_filters(sub or []),
        is_bot=is_bot,
        converted=converted,
        click_id=click_id,
        from_day=from_day,
        to_day=to_day,
        since=since,
        until=until,
        before_id=before,
    )
    workspace = membership.workspace
    # One more than asked tells whether another page follows.
    found = await click_log.list_click_log(
        conn, workspace.id, workspace.timezone, where, limit=limit + 1
    )
    page = [LoggedClickOut.of(logged) for logged in found[:limit]]
    return ClickPage(clicks=page, next_before=page[-1].id if len(found) > limit else None)


@router.get("/{click_id}", summary="A click with all its parameters and its conversions")
async def get_click(click_id: str, membership: InWorkspace, conn: Db) -> ClickDetailOut:
    return ClickDetailOut.of(
        await click_log.get_click_detail(conn, membership.workspace.id, click_id)
    )
