"""Workspace settings: name, time zone, currency, fallback URL and hold period; the postback URL
and its token; exchange rates; the members and the caller's API keys, whose forms live in
members.py and api_keys.py."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.accounts import list_api_keys
from trilha.currencies import delete_rate, list_rates, save_rate
from trilha.errors import InvalidInput
from trilha.invitations import list_invitations
from trilha.privacy.forget import forget_buyer
from trilha.web.auth import Db, WalTruncated
from trilha.web.dashboard.pages import InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.web.dashboard.workspaces import CURRENCY_CHOICES
from trilha.workspaces import Role, list_members, rotate_postback_token, update_workspace
from trilha.zones import zone_choices

router = APIRouter(route_class=DashboardRoute)

WORKSPACE_FIELDS = ("name", "timezone", "currency", "fallback_url", "hold_days")


@router.get("/w/{workspace_id}/settings")
async def settings_page(page: InWorkspace, conn: Db) -> Response:
    return await render_settings(page, conn)


@router.post("/w/{workspace_id}/settings")
async def save_settings(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    form = await read_form(page.request)
    values = {name: form[name] for name in WORKSPACE_FIELDS}
    try:
        await update_workspace(
            conn,
            page.workspace,
            name=values["name"],
            timezone=values["timezone"],
            currency=values["currency"],
            fallback_url=values["fallback_url"] or None,
            clear_fallback_url=not values["fallback_url"],
            hold_days=values["hold_days"] or "0",
        )
    except InvalidInput as exc:
        context = {"values": values, "errors": field_errors(exc)}
        return await render_settings(page, conn, context, status_code=422)
    return redirect(page, settings_url(page), "settings.saved")


@router.post("/w/{workspace_id}/settings/privacy")
async def save_privacy(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    form = await read_form(page.request)
    keeps = form["keeps_buyer_data"] == "on"
    await update_workspace(conn, page.workspace, keeps_buyer_data=keeps)
    return redirect(page, settings_url(page, "#privacy"), "settings.saved")


@router.post("/w/{workspace_id}/settings/forget-buyer")
async def forget(_: WalTruncated, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    buyer = (await read_form(page.request))["buyer"].strip()
    named = {"email": buyer} if "@" in buyer else {"cpf": buyer}
    try:
        forgotten = await conn.run_sync(
            forget_buyer, page.workspace.id, **named, now=datetime.now(UTC)
        )
    except InvalidInput as exc:
        errors = {"buyer": next(iter(field_errors(exc).values()))}
        context = {"forget_values": {"buyer": buyer}, "forget_errors": errors}
        return await render_settings(page, conn, context, status_code=422)
    counts = {name: str(value) for name, value in asdict(forgotten).items()}
    return redirect(page, settings_url(page, "#privacy"), "privacy.forgotten", **counts)


@router.post("/w/{workspace_id}/rates")
async def add_rate(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    values = {name: form[name].strip() for name in ("currency", "day", "rate")}
    workspace = page.workspace
    try:
        rate, converted = await conn.run_sync(
            save_rate, workspace.id, workspace.currency, **values, now=datetime.now(UTC)
        )
    except InvalidInput as exc:
        context = {"rate_values": values, "rate_errors": field_errors(exc)}
        return await render_settings(page, conn, context, status_code=422)
    return redirect(
        page,
        settings_url(page, "#rates"),
        "rates.saved",
        currency=rate.currency,
        converted=str(converted),
    )


@router.post("/w/{workspace_id}/rates/{rate_id}/delete")
async def remove_rate(rate_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    await conn.run_sync(delete_rate, page.workspace.id, rate_id)
    return redirect(page, settings_url(page, "#rates"), "rates.deleted")


@router.post("/w/{workspace_id}/settings/postback-token")
async def rotate_token(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.OWNER)
    await rotate_postback_token(conn, page.workspace)
    return redirect(page, settings_url(page), "settings.token_rotated")


def settings_url(page: Page, anchor: str = "") -> str:
    return f"/w/{page.workspace.id}/settings{anchor}"


async def render_settings(
    page: Page,
    conn: AsyncConnection,
    context: dict[str, Any] | None = None,
    *,
    status_code: int = 200,
) -> Response:
    """The settings page; ``context`` carries a failed form's values and errors, or a new key."""
    workspace = page.workspace
    values = {name: _text(getattr(workspace, name)) for name in WORKSPACE_FIELDS}
    full = {
        "section": "settings",
        "values": values,
        "errors": {},
        "member_errors": {},
        "key_errors": {},
        "new_key": None,
        "postback_url": workspace.postback_url(page.settings.base_url),
        "members": await list_members(conn, workspace),
        "invitations": (
            await list_invitations(conn, workspace, now=datetime.now(UTC))
            if page.current.role.allows(Role.OWNER)
            else []
        ),
        "new_invitation": None,
        "api_keys": await list_api_keys(conn, page.user),
        "rates": await conn.run_sync(list_rates, workspace.id, workspace.currency),
        "rate_values": {"currency": "", "day": "", "rate": ""},
        "rate_errors": {},
        "roles": [role.value for role in Role],
        "timezones": zone_choices(page.t.locale, datetime.now(UTC)),
        "currencies": CURRENCY_CHOICES,
        **(context or {}),
    }
    return render(page, "dashboard/settings/page.html", full, status_code=status_code)


def _text(value: object) -> str:
    return "" if value is None else str(value)
