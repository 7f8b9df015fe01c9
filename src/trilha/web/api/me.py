"""GET and PATCH /me: the caller's own account."""

from __future__ import annotations

from fastapi import APIRouter

from trilha import accounts
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, UserOut, UserPatch
from trilha.web.auth import ApiUser, Db

router = APIRouter(route_class=ApiRoute, prefix="/me", tags=["me"], responses=AUTH_ERRORS)


@router.get("", summary="Who is calling")
async def get_me(user: ApiUser) -> UserOut:
    return UserOut.model_validate(user)


@router.patch("", summary="Change your name or language")
async def update_me(body: UserPatch, user: ApiUser, conn: Db) -> UserOut:
    updated = await accounts.update_user(conn, user, name=body.name, locale=body.locale)
    return UserOut.model_validate(updated)
