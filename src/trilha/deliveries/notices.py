"""In-app notices: what a workspace's people are told (a destination switched itself off)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import notices
from trilha.errors import NotFound
from trilha.workspaces import Workspace

NOTICES_SHOWN = 100


async def list_notices(
    conn: AsyncConnection, workspace: Workspace, *, unread_only: bool = False
) -> list[dict[str, Any]]:
    """The newest notices first."""
    query = select(notices).where(notices.c.workspace_id == workspace.id)
    if unread_only:
        query = query.where(notices.c.read_at.is_(None))
    rows = await conn.execute(
        query.order_by(notices.c.created_at.desc(), notices.c.id.desc()).limit(NOTICES_SHOWN)
    )
    return [dict(row) for row in rows.mappings()]


async def mark_read(
    conn: AsyncConnection, workspace: Workspace, notice_id: str, *, now: datetime
) -> None:
    result = await conn.execute(
        update(notices)
        .where(notices.c.id == notice_id, notices.c.workspace_id == workspace.id)
        .values(read_at=now)
    )
    if result.rowcount == 0:
        raise NotFound("no such notice")
