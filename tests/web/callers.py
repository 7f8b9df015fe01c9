"""Who calls the API in a test: a user with an API key, in a workspace with some role."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_api_key, make_user, make_workspace, now
from trilha.accounts import User
from trilha.workspaces import Role, Workspace, add_member


@dataclass(frozen=True, slots=True)
class Caller:
    user: User
    headers: dict[str, str]


def bearer(secret: str) -> dict[str, str]:
    return {"authorization": f"Bearer {secret}"}


async def make_caller(db: AsyncEngine) -> Caller:
    user = await make_user(db)
    return Caller(user, bearer(await make_api_key(db, user)))


async def make_owner(db: AsyncEngine, **fields: object) -> tuple[Caller, Workspace]:
    """A caller and the workspace they own."""
    caller = await make_caller(db)
    return caller, await make_workspace(db, owner=caller.user, **fields)


async def make_member(db: AsyncEngine, workspace: Workspace, role: Role) -> Caller:
    caller = await make_caller(db)
    await join(db, workspace, caller.user, role)
    return caller


async def join(db: AsyncEngine, workspace: Workspace, user: User, role: Role) -> None:
    async with db.begin() as conn:
        await add_member(conn, workspace, user, role=role, now=now())
