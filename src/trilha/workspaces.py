"""Workspaces, and who belongs to them with which role."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.accounts import User, find_user_by_email
from trilha.db.schema import memberships, users, workspaces
from trilha.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from trilha.event_types import add_builtin_event_types
from trilha.hold import require_hold_days
from trilha.ids import new_id, new_secret
from trilha.validation import (
    NAME_MAX,
    optional_http_url,
    require_currency,
    require_email,
    require_text,
    require_timezone,
)


class Role(StrEnum):
    OWNER = "owner"
    MEMBER = "member"
    VIEWER = "viewer"

    def allows(self, needed: Role) -> bool:
        """Owners may do what members may, and members what viewers may."""
        order = (Role.VIEWER, Role.MEMBER, Role.OWNER)
        return order.index(self) >= order.index(needed)


@dataclass(frozen=True, slots=True)
class Workspace:
    id: str
    name: str
    timezone: str
    currency: str
    postback_token: str
    fallback_url: str | None
    created_at: datetime
    keeps_buyer_data: bool = False  # off: buyers' data is masked in stored payloads
    hold_days: int = 0  # approved revenue on hold this long (trilha.hold)

    def postback_url(self, public_url: str) -> str:
        """The URL sales platforms send postbacks to; it holds the secret token."""
        return f"{public_url}/postback?token={self.postback_token}"


@dataclass(frozen=True, slots=True)
class Membership:
    workspace: Workspace
    role: Role

    def require(self, needed: Role) -> None:
        if not self.role.allows(needed):
            raise PermissionDenied(f"this needs the {needed.value} role in the workspace")


@dataclass(frozen=True, slots=True)
class Member:
    user_id: str
    email: str
    name: str
    role: Role
    created_at: datetime


def _workspace(row: object) -> Workspace:
    return Workspace(**{f: getattr(row, f) for f in Workspace.__dataclass_fields__})


async def create_workspace(
    conn: AsyncConnection,
    owner: User,
    *,
    name: str,
    timezone: str = "America/Sao_Paulo",
    currency: str = "BRL",
    fallback_url: str | None = None,
    now: datetime,
) -> Workspace:
    workspace = Workspace(
        id=new_id(),
        name=require_text(name, "name", max_length=NAME_MAX),
        timezone=require_timezone(timezone),
        currency=require_currency(currency),
        postback_token=new_secret(),
        fallback_url=optional_http_url(fallback_url, "fallback_url"),
        created_at=now,
    )
    await conn.execute(workspaces.insert().values(**asdict(workspace)))
    await conn.execute(
        memberships.insert().values(
            workspace_id=workspace.id, user_id=owner.id, role=Role.OWNER, created_at=now
        )
    )
    await add_builtin_event_types(conn, workspace.id, now=now)
    return workspace


async def list_memberships(conn: AsyncConnection, user: User) -> list[Membership]:
    rows = await conn.execute(
        select(workspaces, memberships.c.role)
        .join(memberships, memberships.c.workspace_id == workspaces.c.id)
        .where(memberships.c.user_id == user.id)
        .order_by(workspaces.c.name, workspaces.c.id)
    )
    return [Membership(_workspace(row), Role(row.role)) for row in rows]


async def get_membership(conn: AsyncConnection, user: User, workspace_id: str) -> Membership:
    """The user's place in a workspace; NotFound also when they are not a member."""
    row = (
        await conn.execute(
            select(workspaces, memberships.c.role)
            .join(memberships, memberships.c.workspace_id == workspaces.c.id)
            .where(memberships.c.user_id == user.id, workspaces.c.id == workspace_id)
        )
    ).first()
    if row is None:
        raise NotFound("workspace not found")
    return Membership(_workspace(row), Role(row.role))


async def update_workspace(
    conn: AsyncConnection,
    workspace: Workspace,
    *,
    name: str | None = None,
    timezone: str | None = None,
    currency: str | None = None,
    fallback_url: str | None = None,
    clear_fallback_url: bool = False,
    keeps_buyer_data: bool | None = None,
    hold_days: int | str | None = None,
) -> Workspace:
    values: dict[str, object] = {}
    if keeps_buyer_data is not None:
        values["keeps_buyer_data"] = keeps_buyer_data
    if hold_days is not None:
        values["hold_days"] = require_hold_days(hold_days)
    if name is not None:
        values["name"] = require_text(name, "name", max_length=NAME_MAX)
    if timezone is not None:
        values["timezone"] = require_timezone(timezone)
    if currency is not None:
        values["currency"] = require_currency(currency)
    if fallback_url is not None or clear_fallback_url:
        values["fallback_url"] = optional_http_url(fallback_url, "fallback_url")
    if values:
        await conn.execute(
            update(workspaces).where(workspaces.c.id == workspace.id).values(**values)
        )
    return await get_workspace(conn, workspace.id)


async def rotate_postback_token(conn: AsyncConnection, workspace: Workspace) -> Workspace:
    await conn.execute(
        update(workspaces)
        .where(workspaces.c.id == workspace.id)
        .values(postback_token=new_secret())
    )
    return await get_workspace(conn, workspace.id)


async def delete_workspace(conn: AsyncConnection, workspace: Workspace) -> None:
    await conn.execute(delete(workspaces).where(workspaces.c.id == workspace.id))


async def get_workspace(conn: AsyncConnection, workspace_id: str) -> Workspace:
    row = (await conn.execute(select(workspaces).where(workspaces.c.id == workspace_id))).first()
    if row is None:
        raise NotFound("workspace not found")
    return _workspace(row)


async def list_members(conn: AsyncConnection, workspace: Workspace) -> list[Member]:
    rows = await conn.execute(
        select(
            users.c.id, users.c.email, users.c.name, memberships.c.role, memberships.c.created_at
        )
        .join(memberships, memberships.c.user_id == users.c.id)
        .where(memberships.c.workspace_id == workspace.id)
        .order_by(users.c.email)
    )
    return [Member(r.id, r.email, r.name, Role(r.role), r.created_at) for r in rows]


async def add_member(
    conn: AsyncConnection, workspace: Workspace, user: User, *, role: Role, now: datetime
) -> Member:
    try:
        async with conn.begin_nested():
            await conn.execute(
                memberships.insert().values(
                    workspace_id=workspace.id, user_id=user.id, role=role, created_at=now
                )
            )
    except IntegrityError:
        raise Conflict("this user is already a member", field="email") from None
    return Member(user.id, user.email, user.name, role, now)


async def add_member_by_email(
    conn: AsyncConnection, workspace: Workspace, *, email: str, role: Role, now: datetime
) -> Member:
    """Add an existing user; people without an account must sign up first."""
    user = await find_user_by_email(conn, require_email(email))
    if user is None:
        raise NotFound("no user with this e-mail; they need an account before joining")
    return await add_member(conn, workspace, user, role=role, now=now)


async def get_member(conn: AsyncConnection, workspace: Workspace, user_id: str) -> Member:
    row = (
        await conn.execute(
            select(
                users.c.id,
                users.c.email,
                users.c.name,
                memberships.c.role,
                memberships.c.created_at,
            )
            .join(memberships, memberships.c.user_id == users.c.id)
            .where(memberships.c.workspace_id == workspace.id, users.c.id == user_id)
        )
    ).first()
    if row is None:
        raise NotFound("member not found")
    return Member(row.id, row.email, row.name, Role(row.role), row.created_at)


async def change_role(
    conn: AsyncConnection, workspace: Workspace, user_id: str, role: Role
) -> None:
    await _keep_an_owner(conn, workspace, user_id, new_role=role)
    result = await conn.execute(
        update(memberships)
        .where(memberships.c.workspace_id == workspace.id, memberships.c.user_id == user_id)
        .values(role=role)
    )
    if result.rowcount == 0:
        raise NotFound("member not found")


async def remove_member(conn: AsyncConnection, workspace: Workspace, user_id: str) -> None:
    await _keep_an_owner(conn, workspace, user_id, new_role=None)
    result = await conn.execute(
        delete(memberships).where(
            memberships.c.workspace_id == workspace.id, memberships.c.user_id == user_id
        )
    )
    if result.rowcount == 0:
        raise NotFound("member not found")


async def _keep_an_owner(
    conn: AsyncConnection, workspace: Workspace, user_id: str, *, new_role: Role | None
) -> None:
    """Refuse to take the last owner away.

    The owners' rows stay locked until the transaction ends, so two owners stepping down at
    once are checked one after the other: on PostgreSQL the second waits, then reads the owners
    left (READ COMMITTED); SQLite has no FOR UPDATE, but every transaction there starts with
    BEGIN IMMEDIATE and so holds the one write lock already.
    """
    owners = set(
        (
            await conn.execute(
                select(memberships.c.user_id)
                .where(memberships.c.workspace_id == workspace.id, memberships.c.role == Role.OWNER)
                .with_for_update()
            )
        ).scalars()
    )
    if owners == {user_id} and new_role != Role.OWNER:
        raise InvalidInput({"role": "a workspace needs at least one owner"})
