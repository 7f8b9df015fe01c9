"""/api-keys: the caller's API keys. A key's secret is shown once, when it is created."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

from fastapi import APIRouter

from trilha import accounts
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, ApiKeyCreated, ApiKeyIn, ApiKeyOut
from trilha.web.auth import ApiUser, Db

router = APIRouter(
    route_class=ApiRoute, prefix="/api-keys", tags=["api keys"], responses=AUTH_ERRORS
)


@router.get("", summary="List your API keys, revoked ones included")
async def list_api_keys(user: ApiUser, conn: Db) -> list[ApiKeyOut]:
    return [ApiKeyOut.of(key) for key in await accounts.list_api_keys(conn, user)]


@router.post("", status_code=201, summary="Create an API key; its secret is shown only now")
async def create_api_key(body: ApiKeyIn, user: ApiUser, conn: Db) -> ApiKeyCreated:
    key, secret = await accounts.create_api_key(conn, user, name=body.name, now=datetime.now(UTC))
    return ApiKeyCreated(**asdict(key), secret=secret)


@router.delete("/{key_id}", status_code=204, summary="Revoke an API key", responses=NOT_FOUND)
async def revoke_api_key(key_id: str, user: ApiUser, conn: Db) -> None:
    await accounts.revoke_api_key(conn, user, key_id, now=datetime.now(UTC))
