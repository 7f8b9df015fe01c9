"""/workspaces/{id}/sources: traffic sources and the query parameters their links carry."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha import campaigns
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import (
    AUTH_ERRORS,
    CONFLICT,
    NOT_FOUND,
    SourceIn,
    SourceOut,
    SourcePatch,
    mappings,
)
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/sources",
    tags=["traffic sources"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the workspace's traffic sources")
async def list_sources(membership: InWorkspace, conn: Db) -> list[SourceOut]:
    return [SourceOut.of(s) for s in await campaigns.list_sources(conn, membership.workspace)]


@router.post("", status_code=201, summary="Create a traffic source", responses=CONFLICT)
async def create_source(body: SourceIn, membership: InWorkspace, conn: Db) -> SourceOut:
    membership.require(Role.MEMBER)
    source = await campaigns.create_source(
        conn,
        membership.workspace,
        name=body.name,
        params=mappings(body.params),
        now=datetime.now(UTC),
    )
    return SourceOut.of(source)


@router.get("/{source_id}", summary="A traffic source")
async def get_source(source_id: str, membership: InWorkspace, conn: Db) -> SourceOut:
    return SourceOut.of(await campaigns.get_source(conn, membership.workspace, source_id))


@router.patch(
    "/{source_id}", summary="Rename a traffic source or change its parameters", responses=CONFLICT
)
async def update_source(
    source_id: str, body: SourcePatch, membership: InWorkspace, conn: Db
) -> SourceOut:
    membership.require(Role.MEMBER)
    source = await campaigns.update_source(
        conn,
        membership.workspace,
        source_id,
        name=body.name,
        params=None if body.params is None else mappings(body.params),
    )
    return SourceOut.of(source)


@router.delete(
    "/{source_id}",
    status_code=204,
    summary="Delete a traffic source; its campaigns and clicks keep no source",
)
async def delete_source(source_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await campaigns.delete_source(conn, membership.workspace, source_id)
