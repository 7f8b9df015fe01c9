"""What handlers receive besides the request body: settings, and the caller's workspace."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request

from trilha.settings import Settings
from trilha.web.auth import ApiUser, Db, runtime_of
from trilha.workspaces import Membership, get_membership


def app_settings(request: Request) -> Settings:
    return runtime_of(request).settings


async def workspace_membership(
    workspace_id: Annotated[str, Path(description="The workspace's id.")],
    user: ApiUser,
    conn: Db,
) -> Membership:
    """The caller's membership; a workspace they are not in answers 404, as if it did not exist."""
    return await get_membership(conn, user, workspace_id)


AppSettings = Annotated[Settings, Depends(app_settings)]
InWorkspace = Annotated[Membership, Depends(workspace_membership)]
