"""The home redirect, the workspace switcher's target, and creating a workspace."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from fastapi import APIRouter, Response

from trilha.errors import InvalidInput
from trilha.web.auth import Db
from trilha.web.dashboard.pages import WORKSPACE_COOKIE, Page, SignedIn, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import create_workspace, list_memberships
from trilha.zones import zone_choices

router = APIRouter(route_class=DashboardRoute)

CURRENCY_CHOICES = ("BRL", "USD", "EUR", "GBP", "ARS", "MXN", "COP", "CLP", "PEN")
NEW_WORKSPACE_DEFAULTS = {"name": "", "timezone": "America/Sao_Paulo", "currency": "BRL"}


@router.get("/")
async def home(page: SignedIn, conn: Db) -> Response:
    """The remembered workspace's home screen, else the first workspace's."""
    memberships = await list_memberships(conn, page.user)
    if not memberships:
        return redirect(page, "/workspaces/new")
    remembered = page.request.cookies.get(WORKSPACE_COOKIE)
    ids = [m.workspace.id for m in memberships]
    return redirect(page, f"/w/{remembered if remembered in ids else ids[0]}")


@router.get("/workspaces/new")
async def new_workspace(page: SignedIn, conn: Db) -> Response:
    page = replace(page, memberships=tuple(await list_memberships(conn, page.user)))
    return render(page, "dashboard/workspaces/new.html", _form(page, NEW_WORKSPACE_DEFAULTS, {}))


@router.post("/workspaces")
async def add_workspace(page: SignedIn, conn: Db) -> Response:
    form = await read_form(page.request)
    values = {name: form[name] for name in NEW_WORKSPACE_DEFAULTS}
    try:
        workspace = await create_workspace(conn, page.user, now=datetime.now(UTC), **values)
    except InvalidInput as exc:
        page = replace(page, memberships=tuple(await list_memberships(conn, page.user)))
        context = _form(page, values, field_errors(exc))
        return render(page, "dashboard/workspaces/new.html", context, status_code=422)
    return redirect(page, f"/w/{workspace.id}/campaigns", "workspaces.created", name=workspace.name)


def _form(page: Page, values: dict[str, str], errors: dict[str, str]) -> dict[str, object]:
    return {
        "values": values,
        "errors": errors,
        "timezones": zone_choices(page.t.locale, datetime.now(UTC)),
        "currencies": CURRENCY_CHOICES,
    }
