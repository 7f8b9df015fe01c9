"""Invitations: an owner makes a one-time link for an e-mail and a role; whoever opens it joins
the workspace, making their account if that e-mail has none.

Only the link's hash is stored; the link is shown once, to the owner who made it. It expires
after INVITATION_DAYS, and accepting it spends it in one conditional UPDATE, whose row count
decides, so of two tabs accepting at once only one joins.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.accounts import NewSession, User, create_user, find_user_by_email, start_session
from trilha.db.schema import invitations, memberships, users, workspaces
from trilha.errors import Conflict, InvalidInput, NotFound
from trilha.ids import hash_secret, new_id, new_secret
from trilha.passwords import hash_password
from trilha.validation import require_email
from trilha.workspaces import Role, Workspace, add_member, get_workspace

INVITATION_DAYS = 7
INVITE_PATH = "/invite/"


@dataclass(frozen=True, slots=True)
class Invitation:
    id: str
    email: str
    role: Role
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class NewInvitation:
    invitation: Invitation
    token: str  # shown once, in the link

    def url(self, base_url: str) -> str:
        return f"{base_url.rstrip('/')}{INVITE_PATH}{self.token}"


@dataclass(frozen=True, slots=True)
class Pending:
    """An invitation as the person who opens its link sees it."""

    email: str
    role: Role
    workspace_id: str
    workspace_name: str
    has_account: bool


@dataclass(frozen=True, slots=True)
class Joined:
    workspace_id: str
    session: NewSession | None  # a new account's first session; None for an existing user


async def invite(
    conn: AsyncConnection,
    workspace: Workspace,
    *,
    email: str,
    role: Role,
    invited_by: User,
    now: datetime,
) -> NewInvitation:
    email = require_email(email)
    member = await conn.execute(
        select(memberships.c.user_id)
        .join(users, users.c.id == memberships.c.user_id)
        .where(memberships.c.workspace_id == workspace.id, users.c.email == email)
    )
    if member.first() is not None:
        raise Conflict("this user is already a member", field="email")
    token = new_secret()
    invitation = Invitation(new_id(), email, role, now, now + timedelta(days=INVITATION_DAYS))
    await conn.execute(
        invitations.insert().values(
            id=invitation.id,
            workspace_id=workspace.id,
            email=email,
            role=role,
            token_hash=hash_secret(token),
            created_by=invited_by.id,
            created_at=now,
            expires_at=invitation.expires_at,
        )
    )
    return NewInvitation(invitation, token)


async def list_invitations(
    conn: AsyncConnection, workspace: Workspace, *, now: datetime
) -> list[Invitation]:
    """The invitations not accepted and not expired, newest first."""
    rows = await conn.execute(
        select(invitations)
        .where(
            invitations.c.workspace_id == workspace.id,
            invitations.c.accepted_at.is_(None),
            invitations.c.expires_at > now,
        )
        .order_by(invitations.c.created_at.desc())
    )
    return [Invitation(r.id, r.email, Role(r.role), r.created_at, r.expires_at) for r in rows]


async def revoke_invitation(
    conn: AsyncConnection, workspace: Workspace, invitation_id: str
) -> None:
    result = await conn.execute(
        delete(invitations).where(
            invitations.c.id == invitation_id,
            invitations.c.workspace_id == workspace.id,
            invitations.c.accepted_at.is_(None),
        )
    )
    if result.rowcount == 0:
        raise NotFound("invitation not found")


async def pending_invitation(conn: AsyncConnection, token: str, *, now: datetime) -> Pending | None:
    """The invitation behind a link, or None when it is unknown, spent or expired."""
    row = (
        await conn.execute(
            select(
                invitations.c.email,
                invitations.c.role,
                workspaces.c.id.label("workspace_id"),
                workspaces.c.name.label("workspace_name"),
            )
            .join(workspaces, workspaces.c.id == invitations.c.workspace_id)
            .where(
                invitations.c.token_hash == hash_secret(token),
                invitations.c.accepted_at.is_(None),
                invitations.c.expires_at > now,
            )
        )
    ).first()
    if row is None:
        return None
    has_account = await find_user_by_email(conn, row.email) is not None
    return Pending(row.email, Role(row.role), row.workspace_id, row.workspace_name, has_account)


async def accept_invitation(
    engine: AsyncEngine,
    token: str,
    *,
    signed_in: User | None,
    name: str,
    password: str,
    locale: str,
    now: datetime,
) -> Joined | None:
    """Spend the link and add its e-mail's user to the workspace: the user signed in when the
    e-mail has an account (they must be that user), else a new account with ``password``.

    None when the link is unknown, spent or expired. The password is hashed between a short
    look at the link and the transaction that spends it, as the setup link does.
    """
    async with engine.connect() as conn:
        pending = await pending_invitation(conn, token, now=now)
    if pending is None:
        return None
    if pending.has_account and (signed_in is None or signed_in.email != pending.email):
        raise InvalidInput({"email": f"sign in as {pending.email} to accept this invitation"})
    password_hash = None if pending.has_account else await hash_password(password)
    async with engine.begin() as conn:
        if not await _spend(conn, token, now=now):
            return None
        workspace = await get_workspace(conn, pending.workspace_id)
        session = None
        if password_hash is None:
            user = signed_in
            if user is None:  # checked above; kept for the type checker
                raise InvalidInput({"email": "sign in to accept this invitation"})
        else:
            user = await create_user(
                conn,
                email=pending.email,
                password_hash=password_hash,
                name=name,
                locale=locale,
                now=now,
            )
            session = NewSession(user, await start_session(conn, user, now=now))
        await add_member(conn, workspace, user, role=pending.role, now=now)
        return Joined(workspace.id, session)


async def _spend(conn: AsyncConnection, token: str, *, now: datetime) -> bool:
    result = await conn.execute(
        update(invitations)
        .where(
            invitations.c.token_hash == hash_secret(token),
            invitations.c.accepted_at.is_(None),
            invitations.c.expires_at > now,
        )
        .values(accepted_at=now)
    )
    return result.rowcount > 0
