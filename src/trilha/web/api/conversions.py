"""/workspaces/{id}/conversions and /orphans: recorded conversions, with their status history."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions import lookup, orphans
from trilha.conversions.lookup import ConversionFilter
from trilha.conversions.status import Status
from trilha.conversions.tests import delete_test_conversion as delete_test_conversion_row
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.postback_schemas import (
    AttachIn,
    ConversionDetail,
    ConversionOut,
    ConversionPage,
)
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, AwareUtcDatetime, error
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}",
    tags=["conversions"],
    responses=AUTH_ERRORS | NOT_FOUND,
)
Since = Annotated[
    AwareUtcDatetime | None, Query(description="From this time on, e.g. 2024-05-01T00:00-03:00")
]
Until = Annotated[AwareUtcDatetime | None, Query(description="Before this time")]
Limit = Annotated[int, Query(ge=1, le=1000, description="Conversions per page")]
Before = Annotated[str | None, Query(description="`next_before` of the previous page")]


@router.get("/conversions", summary="List conversions, newest first, a page at a time")
async def list_conversions(
    membership: InWorkspace,
    conn: Db,
    since: Since = None,
    until: Until = None,
    campaign_id: str | None = None,
    click_id: Annotated[
        str | None, Query(description="The click it is on, or the click id the platform sent")
    ] = None,
    txid: str | None = None,
    status: Status | None = None,
    event_type: str | None = None,
    merchant_id: str | None = None,
    orphan: Annotated[
        bool | None, Query(description="true: only orphans; false: only those on a click")
    ] = None,
    limit: Limit = 100,
    before: Before = None,
) -> ConversionPage:
    where = ConversionFilter(
        since=since,
        until=until,
        campaign_id=campaign_id,
        click_id=click_id,
        txid=txid,
        status=status,
        event_type=event_type,
        merchant_id=merchant_id,
        orphan=orphan,
        before_id=before,
    )
    return await _page(conn, membership.workspace.id, where, limit)


@router.get("/orphans", summary="List orphans: conversions whose click is unknown, newest first")
async def list_orphans(
    membership: InWorkspace, conn: Db, limit: Limit = 100, before: Before = None
) -> ConversionPage:
    orphans = ConversionFilter(orphan=True, before_id=before)
    return await _page(conn, membership.workspace.id, orphans, limit)


async def _page(
    conn: AsyncConnection, workspace_id: str, where: ConversionFilter, limit: int
) -> ConversionPage:
    # One more than asked tells whether another page follows.
    found = await lookup.list_conversions(conn, workspace_id, where, limit=limit + 1)
    page = [ConversionOut.of(conversion) for conversion in found[:limit]]
    return ConversionPage(conversions=page, next_before=page[-1].id if len(found) > limit else None)


@router.get("/conversions/{conversion_id}", summary="A conversion, with its status history")
async def get_conversion(conversion_id: str, membership: InWorkspace, conn: Db) -> ConversionDetail:
    conversion = await lookup.get_conversion(conn, membership.workspace.id, conversion_id)
    history = await lookup.status_history(conn, conversion.id)
    return ConversionDetail.with_history(conversion, history)


@router.delete(
    "/conversions/{conversion_id}",
    status_code=204,
    summary='Delete a test conversion (one "send test postback" made); others are kept',
    responses={409: error("Not a test conversion: real sales are kept")},
)
async def delete_test_conversion(conversion_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await conn.run_sync(delete_test_conversion_row, membership.workspace.id, conversion_id)


@router.post(
    "/conversions/{conversion_id}/attach",
    summary="Attach an orphan to the click it came from",
)
async def attach_orphan(
    conversion_id: str, body: AttachIn, membership: InWorkspace, conn: Db
) -> ConversionDetail:
    membership.require(Role.MEMBER)
    workspace_id = membership.workspace.id
    await conn.run_sync(
        orphans.attach_orphan,
        workspace_id,
        conversion_id,
        body.click_id,
        now=datetime.now(UTC),
    )
    conversion = await lookup.get_conversion(conn, workspace_id, conversion_id)
    history = await lookup.status_history(conn, conversion.id)
    return ConversionDetail.with_history(conversion, history)
