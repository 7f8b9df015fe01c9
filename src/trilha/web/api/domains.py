"""/workspaces/{id}/domains: custom tracking domains. Members and owners change and verify them."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request

from trilha import custom_domains
from trilha.custom_domains import DomainPolicy
from trilha.web.api.dependencies import AppSettings, InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import (
    AUTH_ERRORS,
    CONFLICT,
    NOT_FOUND,
    DomainIn,
    DomainOut,
    DomainPatch,
    DomainVerificationOut,
)
from trilha.web.auth import Db, runtime_of
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/domains",
    tags=["domains"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the workspace's custom domains")
async def list_domains(membership: InWorkspace, conn: Db) -> list[DomainOut]:
    return [DomainOut.of(d) for d in await custom_domains.list_domains(conn, membership.workspace)]


@router.post(
    "",
    status_code=201,
    summary="Add a custom domain (pending until verified)",
    responses=CONFLICT,
)
async def add_domain(
    body: DomainIn, membership: InWorkspace, conn: Db, settings: AppSettings
) -> DomainOut:
    membership.require(Role.MEMBER)
    domain = await custom_domains.add_domain(
        conn,
        membership.workspace,
        host=body.host,
        fallback_url=body.fallback_url,
        policy=DomainPolicy.from_settings(settings),
        now=datetime.now(UTC),
    )
    return DomainOut.of(domain)


@router.get("/{domain_id}", summary="A custom domain")
async def get_domain(domain_id: str, membership: InWorkspace, conn: Db) -> DomainOut:
    return DomainOut.of(await custom_domains.get_domain(conn, membership.workspace, domain_id))


@router.post(
    "/{domain_id}/verify",
    summary="Look up the domain's TXT record: verified, or why not yet",
    responses=CONFLICT,
)
async def verify_domain(
    domain_id: str, membership: InWorkspace, conn: Db, settings: AppSettings, request: Request
) -> DomainVerificationOut:
    membership.require(Role.MEMBER)
    domain = await custom_domains.get_domain(conn, membership.workspace, domain_id)
    await conn.commit()  # the DNS lookup must hold no transaction (on SQLite, the write lock)
    domain, check = await custom_domains.verify_domain(
        runtime_of(request).engine,
        domain,
        policy=DomainPolicy.from_settings(settings),
        now=datetime.now(UTC),
    )
    return DomainVerificationOut.of(domain, check)


@router.patch("/{domain_id}", summary="Change a custom domain's fallback URL")
async def update_domain(
    domain_id: str, body: DomainPatch, membership: InWorkspace, conn: Db
) -> DomainOut:
    membership.require(Role.MEMBER)
    domain = await custom_domains.update_domain(
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
    await custom_domains.delete_domain(conn, membership.workspace, domain_id)
