"""The first start's one-time setup link: it makes the owner account and their first workspace."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.accounts import (
    NewSession,
    create_user,
    is_setup_token_valid,
    start_session,
    use_setup_token,
)
from trilha.passwords import hash_password
from trilha.validation import require_email
from trilha.workspaces import Workspace, create_workspace


@dataclass(frozen=True, slots=True)
class Owner:
    session: NewSession
    workspace: Workspace


async def set_up_owner(
    engine: AsyncEngine,
    token: str,
    *,
    email: str,
    password: str,
    user_name: str,
    workspace_name: str,
    locale: str,
    now: datetime,
) -> Owner | None:
    """Spend the link, make the owner and their workspace, and start their session.

    None when the link is unknown or spent. Invalid input raises InvalidInput and leaves the
    link unspent. The password is hashed (a while, in a thread) between a short look at the
    link, so that a wrong link costs no hashing, and the transaction that spends it.
    """
    async with engine.connect() as conn:
        if not await is_setup_token_valid(conn, token):
            return None
    require_email(email)
    password_hash = await hash_password(password)
    async with engine.begin() as conn:
        if not await use_setup_token(conn, token, now=now):
            return None
        user = await create_user(
            conn, email=email, password_hash=password_hash, name=user_name, locale=locale, now=now
        )
        workspace = await create_workspace(conn, user, name=workspace_name, now=now)
        return Owner(NewSession(user, await start_session(conn, user, now=now)), workspace)
