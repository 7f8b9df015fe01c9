"""/workspaces/{id}/deliveries and /notices: the delivery log, retrying by hand, and what the
workspace was told."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from trilha.deliveries import log, notices
from trilha.deliveries.kinds import DeliveryState
from trilha.web.api.delivery_schemas import DeliveryDetail, DeliveryOut, DeliveryPage, NoticeOut
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, AwareUtcDatetime
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}",
    tags=["delivery log"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("/deliveries", summary="List deliveries, newest first, a page at a time")
async def list_deliveries(
    membership: InWorkspace,
    conn: Db,
    destination_id: str | None = None,
    conversion_id: str | None = None,
    state: DeliveryState | None = None,
    since: Annotated[AwareUtcDatetime | None, Query(description="Queued from this time on")] = None,
    until: Annotated[AwareUtcDatetime | None, Query(description="Queued before this time")] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="Entries per page")] = 100,
    before: Annotated[str | None, Query(description="`next_before` of the previous page")] = None,
) -> DeliveryPage:
    where = log.DeliveryFilter(
        destination_id=destination_id,
        conversion_id=conversion_id,
        state=state,
        since=since,
        until=until,
        before_id=before,
    )
    found = await log.list_deliveries(conn, membership.workspace, where, limit=limit + 1)
    page = [DeliveryOut.model_validate(row) for row in found[:limit]]
    return DeliveryPage(deliveries=page, next_before=page[-1].id if len(found) > limit else None)


@router.get("/deliveries/{delivery_id}", summary="A delivery with every attempt's log")
async def get_delivery(delivery_id: str, membership: InWorkspace, conn: Db) -> DeliveryDetail:
    found = await log.get_delivery(conn, membership.workspace, delivery_id)
    return DeliveryDetail.model_validate(found)


@router.post("/deliveries/{delivery_id}/retry", summary="Send a finished delivery again now")
async def retry_delivery(delivery_id: str, membership: InWorkspace, conn: Db) -> DeliveryDetail:
    membership.require(Role.MEMBER)
    found = await log.retry_delivery(conn, membership.workspace, delivery_id, now=datetime.now(UTC))
    return DeliveryDetail.model_validate(found)


@router.get("/notices", summary="What the workspace was told, newest first")
async def list_notices(membership: InWorkspace, conn: Db, unread: bool = False) -> list[NoticeOut]:
    found = await notices.list_notices(conn, membership.workspace, unread_only=unread)
    return [NoticeOut.model_validate(n) for n in found]


@router.post("/notices/{notice_id}/read", status_code=204, summary="Mark a notice as read")
async def read_notice(notice_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)  # read for the whole workspace
    await notices.mark_read(conn, membership.workspace, notice_id, now=datetime.now(UTC))
