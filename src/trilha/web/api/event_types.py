"""/workspaces/{id}/event-types: which events count as conversions and which as revenue."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha import event_types
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.postback_schemas import EventTypeIn, EventTypeOut, EventTypePatch
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, CONFLICT, NOT_FOUND
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/event-types",
    tags=["event types"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the event types, built-in ones first")
async def list_event_types(membership: InWorkspace, conn: Db) -> list[EventTypeOut]:
    found = await event_types.list_event_types(conn, membership.workspace.id)
    return [EventTypeOut.model_validate(item) for item in found]


@router.post("", status_code=201, summary="Create a custom event type", responses=CONFLICT)
async def create_event_type(body: EventTypeIn, membership: InWorkspace, conn: Db) -> EventTypeOut:
    membership.require(Role.MEMBER)
    item = await event_types.create_event_type(
        conn,
        membership.workspace.id,
        name=body.name,
        counts_as_conversion=body.counts_as_conversion,
        counts_as_revenue=body.counts_as_revenue,
        now=datetime.now(UTC),
    )
    return EventTypeOut.model_validate(item)


@router.patch("/{event_type_id}", summary="Change what an event type counts as")
async def update_event_type(
    event_type_id: str, body: EventTypePatch, membership: InWorkspace, conn: Db
) -> EventTypeOut:
    membership.require(Role.MEMBER)
    item = await event_types.update_event_type(
        conn,
        membership.workspace.id,
        event_type_id,
        counts_as_conversion=body.counts_as_conversion,
        counts_as_revenue=body.counts_as_revenue,
    )
    return EventTypeOut.model_validate(item)


@router.delete(
    "/{event_type_id}",
    status_code=204,
    summary="Delete a custom event type; its conversions keep the name",
)
async def delete_event_type(event_type_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await event_types.delete_event_type(conn, membership.workspace.id, event_type_id)
