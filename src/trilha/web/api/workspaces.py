"""/workspaces: the caller's workspaces, their settings and their postback token."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha import workspaces
from trilha.privacy import forget
from trilha.web.api.dependencies import AppSettings, InWorkspace
from trilha.web.api.postback_schemas import ForgetBuyerIn, ForgottenOut
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import (
    AUTH_ERRORS,
    NOT_FOUND,
    WorkspaceDetail,
    WorkspaceIn,
    WorkspaceOut,
    WorkspacePatch,
)
from trilha.web.auth import ApiUser, Db, WalTruncated
from trilha.workspaces import Membership, Role

router = APIRouter(
    route_class=ApiRoute, prefix="/workspaces", tags=["workspaces"], responses=AUTH_ERRORS
)
ONE = "/{workspace_id}"


@router.get("", summary="List your workspaces, with your role in each")
async def list_workspaces(user: ApiUser, conn: Db) -> list[WorkspaceOut]:
    return [WorkspaceOut.of(m) for m in await workspaces.list_memberships(conn, user)]


@router.post("", status_code=201, summary="Create a workspace; you become its owner")
async def create_workspace(body: WorkspaceIn, user: ApiUser, conn: Db) -> WorkspaceOut:
    workspace = await workspaces.create_workspace(
        conn,
        user,
        name=body.name,
        timezone=body.timezone,
        currency=body.currency,
        fallback_url=body.fallback_url,
        now=datetime.now(UTC),
    )
    return WorkspaceOut.of(Membership(workspace, Role.OWNER))


@router.get(ONE, summary="A workspace, with its postback URL", responses=NOT_FOUND)
async def get_workspace(membership: InWorkspace, settings: AppSettings) -> WorkspaceDetail:
    workspace = membership.workspace
    can_see_token = membership.role.allows(Role.MEMBER)
    return WorkspaceDetail(
        **WorkspaceOut.of(membership).model_dump(),
        postback_url=workspace.postback_url(settings.base_url) if can_see_token else None,
    )


@router.patch(ONE, summary="Change a workspace's settings (owner)", responses=NOT_FOUND)
async def update_workspace(body: WorkspacePatch, membership: InWorkspace, conn: Db) -> WorkspaceOut:
    membership.require(Role.OWNER)
    workspace = await workspaces.update_workspace(
        conn,
        membership.workspace,
        name=body.name,
        timezone=body.timezone,
        currency=body.currency,
        fallback_url=body.fallback_url,
        clear_fallback_url="fallback_url" in body.model_fields_set,
        keeps_buyer_data=body.keeps_buyer_data,
        hold_days=body.hold_days,
    )
    return WorkspaceOut.of(Membership(workspace, membership.role))


@router.delete(
    ONE, status_code=204, summary="Delete a workspace and all in it (owner)", responses=NOT_FOUND
)
async def delete_workspace(membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.OWNER)
    await workspaces.delete_workspace(conn, membership.workspace)


@router.post(
    ONE + "/buyers/forget",
    summary="Forget a buyer, by e-mail or CPF/CNPJ (owner): erase them from the log's payloads, "
    "their conversions' hashes, delivery attempts, clicks' sub-ids and unmatched samples",
    responses=NOT_FOUND,
)
async def forget_buyer(
    body: ForgetBuyerIn, _: WalTruncated, membership: InWorkspace, conn: Db
) -> ForgottenOut:
    membership.require(Role.OWNER)
    forgotten = await conn.run_sync(
        forget.forget_buyer,
        membership.workspace.id,
        email=body.email,
        cpf=body.cpf,
        now=datetime.now(UTC),
    )
    return ForgottenOut.model_validate(forgotten)


@router.post(
    ONE + "/postback-token/rotate",
    summary="Replace the postback token (owner); the old postback URL stops working",
    responses=NOT_FOUND,
)
async def rotate_postback_token(membership: InWorkspace, conn: Db) -> WorkspaceOut:
    membership.require(Role.OWNER)
    workspace = await workspaces.rotate_postback_token(conn, membership.workspace)
    return WorkspaceOut.of(Membership(workspace, membership.role))
