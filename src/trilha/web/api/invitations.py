"""/workspaces/{id}/invitations: one-time links that let someone join the workspace (owners)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha import invitations
from trilha.web.api.dependencies import AppSettings, InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import (
    AUTH_ERRORS,
    CONFLICT,
    NOT_FOUND,
    InvitationIn,
    InvitationOut,
    NewInvitationOut,
)
from trilha.web.auth import ApiUser, Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/invitations",
    tags=["members"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the invitations not yet accepted nor expired (owner)")
async def list_invitations(membership: InWorkspace, conn: Db) -> list[InvitationOut]:
    membership.require(Role.OWNER)
    found = await invitations.list_invitations(conn, membership.workspace, now=datetime.now(UTC))
    return [InvitationOut.of(invitation) for invitation in found]


@router.post(
    "",
    status_code=201,
    summary="Invite someone by e-mail: a one-time link, valid 7 days, shown once (owner)",
    responses=CONFLICT,
)
async def invite(
    body: InvitationIn, membership: InWorkspace, user: ApiUser, conn: Db, settings: AppSettings
) -> NewInvitationOut:
    membership.require(Role.OWNER)
    new = await invitations.invite(
        conn,
        membership.workspace,
        email=body.email,
        role=body.role,
        invited_by=user,
        now=datetime.now(UTC),
    )
    return NewInvitationOut(
        **InvitationOut.of(new.invitation).model_dump(), url=new.url(settings.base_url)
    )


@router.delete("/{invitation_id}", status_code=204, summary="Revoke an invitation (owner)")
async def revoke_invitation(invitation_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.OWNER)
    await invitations.revoke_invitation(conn, membership.workspace, invitation_id)
