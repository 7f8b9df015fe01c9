"""/workspaces/{id}/domains: custom tracking domains. Members and owners change them."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha import workspaces
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import (
    AUTH_ERRORS,
    CONFLICT,
    NOT_FOUND,
    DomainIn,
    DomainOut,
    DomainPatch,
)
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/domains",
    tags=["domains"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the workspace's custom domains")
async def list_domains(membership: InWorkspace, conn: Db) -> list[DomainOut]:
    return [DomainOut.of(d) for d in await workspaces.list_domains(conn, membership.workspace)]


@router.post("", status_code=201, summary="Add a custom domain", responses=CONFLICT)
async def add_domain(body: DomainIn, membership: InWorkspace, conn: Db) -> DomainOut:
    membership.require(Role.MEMBER)
    domain = await workspaces.add_domain(
        conn,
        membership.workspace,
        host=body.host,
        fallback_url=body.fallback_url,
        now=datetime.now(UTC),
    )
    return DomainOut.of(domain)


@router.get("/{domain_id}", summary="A custom domain")
async def get_domain(domain_id: str, membership: InWorkspace, conn: Db) -> DomainOut:
    return DomainOut.of(await workspaces.get_domain(conn, membership.workspace, domain_id))


@router.patch("/{domain_id}", summary="Change a custom domain's fallback URL")
async def update_domain(
    domain_id: str, body: DomainPatch, membership: InWorkspace, conn: Db
) -> DomainOut:
    membership.require(Role.MEMBER)
    domain = await workspaces.update_domain(
        conn, membership.workspace, domain_id, fallback_url=body.fallback_url
    )
    return DomainOut.of(domain)


@router.delete(
    "/{domain_id}",
    status_code=204,
    summary="Remove a custom domain no campaign uses",
    responses=CONFLICT,
)
async def delete_domain(domain_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await workspaces.delete_domain(conn, membership.workspace, domain_id)
