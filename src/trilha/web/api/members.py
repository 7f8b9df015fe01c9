"""/workspaces/{id}/members: who belongs to a workspace, with which role. Owners manage them."""

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
    MemberIn,
    MemberOut,
    MemberPatch,
)
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/members",
    tags=["members"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the workspace's members")
async def list_members(membership: InWorkspace, conn: Db) -> list[MemberOut]:
    return [MemberOut.of(m) for m in await workspaces.list_members(conn, membership.workspace)]


@router.post(
    "", status_code=201, summary="Add an existing user by e-mail (owner)", responses=CONFLICT
)
async def add_member(body: MemberIn, membership: InWorkspace, conn: Db) -> MemberOut:
    membership.require(Role.OWNER)
    member = await workspaces.add_member_by_email(
        conn, membership.workspace, email=body.email, role=body.role, now=datetime.now(UTC)
    )
    return MemberOut.of(member)


@router.patch("/{user_id}", summary="Change a member's role (owner)")
async def change_role(
    user_id: str, body: MemberPatch, membership: InWorkspace, conn: Db
) -> MemberOut:
    membership.require(Role.OWNER)
    await workspaces.change_role(conn, membership.workspace, user_id, body.role)
    return MemberOut.of(await workspaces.get_member(conn, membership.workspace, user_id))


@router.delete("/{user_id}", status_code=204, summary="Remove a member (owner)")
async def remove_member(user_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.OWNER)
    await workspaces.remove_member(conn, membership.workspace, user_id)
