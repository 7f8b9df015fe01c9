"""Workspace members, on the settings page: owners add users (invite, by a one-time link, those
without an account), change roles, remove; revoke invitations."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Response

from trilha.errors import Conflict, InvalidInput, NotFound
from trilha.invitations import invite, revoke_invitation
from trilha.web.auth import Db
from trilha.web.dashboard.pages import InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect
from trilha.web.dashboard.settings import render_settings, settings_url
from trilha.workspaces import Role, add_member_by_email, change_role, remove_member

router = APIRouter(route_class=DashboardRoute)


@router.post("/w/{workspace_id}/members")
async def add(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    form = await read_form(page.request)
    values = {"email": form["email"], "role": form["role"]}
    try:
        role = _role(values["role"])
        member = await add_member_by_email(
            conn, page.workspace, email=values["email"], role=role, now=_now()
        )
    except NotFound:  # no account yet: a link that makes one and joins, shown once
        new = await invite(
            conn, page.workspace, email=values["email"], role=role, invited_by=page.user, now=_now()
        )
        context = {"new_invitation": new.url(page.settings.base_url), "invited": new.invitation}
        return await render_settings(page, conn, context)
    except (InvalidInput, Conflict) as exc:
        context = {"member_values": values, "member_errors": field_errors(exc)}
        return await render_settings(page, conn, context, status_code=422)
    return redirect(page, settings_url(page, "#members"), "members.added", email=member.email)


@router.post("/w/{workspace_id}/invitations/{invitation_id}/delete")
async def revoke(invitation_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    await revoke_invitation(conn, page.workspace, invitation_id)
    return redirect(page, settings_url(page, "#members"), "members.invitation_revoked")


@router.post("/w/{workspace_id}/members/{user_id}/role")
async def set_role(user_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    role = _role((await read_form(page.request))["role"])
    try:
        await change_role(conn, page.workspace, user_id, role)
    except InvalidInput as exc:
        return _refused(page, exc)
    return redirect(page, settings_url(page, "#members"), "members.role_changed")


@router.post("/w/{workspace_id}/members/{user_id}/delete")
async def remove(user_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    try:
        await remove_member(conn, page.workspace, user_id)
    except InvalidInput as exc:
        return _refused(page, exc)
    if user_id == page.user.id:  # they left the workspace: it is no longer theirs to see
        return redirect(page, "/", "members.left")
    return redirect(page, settings_url(page, "#members"), "members.removed")


def _refused(page: Page, exc: InvalidInput) -> Response:
    reason = "; ".join(page.t.error(message) for message in exc.fields.values())
    return redirect(
        page, settings_url(page, "#members"), "members.refused", kind="error", reason=reason
    )


def _role(value: str) -> Role:
    try:
        return Role(value)
    except ValueError:
        raise InvalidInput({"role": "must be owner, member or viewer"}) from None


def _now() -> datetime:
    return datetime.now(UTC)
