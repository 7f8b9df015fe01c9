"""The caller's own API keys, on the settings page: a new key is shown once, then only its
prefix; revoked keys stay listed."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Response

from trilha.accounts import create_api_key, revoke_api_key
from trilha.errors import InvalidInput
from trilha.web.auth import Db
from trilha.web.dashboard.pages import InWorkspace, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect
from trilha.web.dashboard.settings import render_settings, settings_url

router = APIRouter(route_class=DashboardRoute)


@router.post("/w/{workspace_id}/api-keys")
async def create(page: InWorkspace, conn: Db) -> Response:
    """Answer with the page itself, not a redirect: the secret must not outlive this response."""
    name = (await read_form(page.request))["name"]
    try:
        key, secret = await create_api_key(conn, page.user, name=name, now=datetime.now(UTC))
    except InvalidInput as exc:
        context = {"key_name": name, "key_errors": field_errors(exc)}
        return await render_settings(page, conn, context, status_code=422)
    return await render_settings(page, conn, {"new_key": {"name": key.name, "secret": secret}})


@router.post("/w/{workspace_id}/api-keys/{key_id}/revoke")
async def revoke(key_id: str, page: InWorkspace, conn: Db) -> Response:
    await revoke_api_key(conn, page.user, key_id, now=datetime.now(UTC))
    return redirect(page, settings_url(page, "#api-keys"), "api_keys.revoked")
