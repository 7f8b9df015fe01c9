"""Event types: the built-in ones and the workspace's own, and whether each counts as a
conversion and as revenue."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.errors import Conflict, InvalidInput
from trilha.event_types import (
    create_event_type,
    delete_event_type,
    get_event_type,
    list_event_types,
    update_event_type,
)
from trilha.web.auth import Db
from trilha.web.dashboard.pages import InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

NEW_EVENT_TYPE = {"name": "", "counts_as_conversion": True, "counts_as_revenue": False}


@router.get("/w/{workspace_id}/event-types")
async def event_type_list(page: InWorkspace, conn: Db) -> Response:
    return await _page(page, conn, NEW_EVENT_TYPE, {})


@router.post("/w/{workspace_id}/event-types")
async def add_event_type(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    flags = _flags(form["counts_as_conversion"], form["counts_as_revenue"])
    try:
        item = await create_event_type(
            conn, page.workspace.id, name=form["name"], now=datetime.now(UTC), **flags
        )
    except (InvalidInput, Conflict) as exc:
        values = {"name": form["name"], **flags}
        return await _page(page, conn, values, field_errors(exc), status_code=422)
    return redirect(page, _url(page), "event_types.created", name=item.name)


@router.post("/w/{workspace_id}/event-types/{event_type_id}")
async def save_event_type(event_type_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    flags = _flags(form["counts_as_conversion"], form["counts_as_revenue"])
    item = await get_event_type(conn, page.workspace.id, event_type_id)
    await update_event_type(conn, page.workspace.id, item.id, **flags)
    return redirect(page, _url(page), "event_types.saved", name=item.name)


@router.post("/w/{workspace_id}/event-types/{event_type_id}/delete")
async def remove_event_type(event_type_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    item = await get_event_type(conn, page.workspace.id, event_type_id)
    await delete_event_type(conn, page.workspace.id, item.id)
    return redirect(page, _url(page), "event_types.deleted", name=item.name)


def _url(page: Page) -> str:
    return f"/w/{page.workspace.id}/event-types"


def _flags(conversion: str, revenue: str) -> dict[str, bool]:
    """Checkboxes: sent when ticked, absent when not."""
    return {"counts_as_conversion": bool(conversion), "counts_as_revenue": bool(revenue)}


async def _page(
    page: Page,
    conn: AsyncConnection,
    values: dict[str, Any],
    errors: dict[str, str],
    *,
    status_code: int = 200,
) -> Response:
    context = {
        "section": "settings",
        "event_types": await list_event_types(conn, page.workspace.id),
        "values": values,
        "errors": errors,
    }
    return render(page, "dashboard/event_types/page.html", context, status_code=status_code)
