"""Traffic sources: which query parameter of a tracking link feeds which click field, with
the ad networks' mappings (Facebook, Google, TikTok) to start from."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Response

from trilha.ad_networks import AD_NETWORKS
from trilha.campaigns import (
    ParamMapping,
    TrafficSource,
    create_source,
    delete_source,
    get_source,
    list_sources,
    update_source,
)
from trilha.dimensions import DIMENSIONS
from trilha.errors import Conflict, InvalidInput
from trilha.web.auth import Db
from trilha.web.dashboard.pages import Form, InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

BLANK_ROWS = 3


@router.get("/w/{workspace_id}/sources")
async def source_list(page: InWorkspace, conn: Db) -> Response:
    sources = await list_sources(conn, page.workspace)
    return render(page, "dashboard/sources/list.html", {"sources": sources, "section": "sources"})


@router.get("/w/{workspace_id}/sources/new")
async def new_source(page: InWorkspace, network: str = "") -> Response:
    page.require(Role.MEMBER)
    chosen = AD_NETWORKS.get(network)
    if chosen is None:
        return _form(page, "", [], {})
    rows = [row.mapping for row in chosen.rows]
    return _form(page, chosen.name, rows, {}, network=network)


@router.get("/w/{workspace_id}/sources/mapping-row")
async def mapping_row(page: InWorkspace) -> Response:
    """One more empty row for the mapping table (htmx)."""
    return render(page, "partials/mapping_row.html", {"row": None, "fields": DIMENSIONS})


@router.post("/w/{workspace_id}/sources")
async def add_source(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    rows = _mappings(form)
    try:
        source = await create_source(
            conn, page.workspace, name=form["name"], params=rows, now=datetime.now(UTC)
        )
    except (InvalidInput, Conflict) as exc:
        return _form(page, form["name"], rows, field_errors(exc), status_code=422)
    return redirect(page, _list_url(page), "sources.created", name=source.name)


@router.get("/w/{workspace_id}/sources/{source_id}")
async def edit_source(source_id: str, page: InWorkspace, conn: Db) -> Response:
    source = await get_source(conn, page.workspace, source_id)
    return _form(page, source.name, list(source.params), {}, source)


@router.post("/w/{workspace_id}/sources/{source_id}")
async def save_source(source_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    source = await get_source(conn, page.workspace, source_id)
    form = await read_form(page.request)
    rows = _mappings(form)
    try:
        source = await update_source(
            conn, page.workspace, source.id, name=form["name"], params=rows
        )
    except (InvalidInput, Conflict) as exc:
        return _form(page, form["name"], rows, field_errors(exc), source, status_code=422)
    return redirect(page, _list_url(page), "sources.saved", name=source.name)


@router.post("/w/{workspace_id}/sources/{source_id}/delete")
async def remove_source(source_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    source = await get_source(conn, page.workspace, source_id)
    await delete_source(conn, page.workspace, source.id)
    return redirect(page, _list_url(page), "sources.deleted", name=source.name)


def _list_url(page: Page) -> str:
    return f"/w/{page.workspace.id}/sources"


def _mappings(form: Form) -> list[ParamMapping]:
    """The filled rows of the mapping table; a row without a parameter name is left out."""
    pairs = zip(form.getlist("param"), form.getlist("field"), strict=False)
    return [ParamMapping(param.strip(), field) for param, field in pairs if param.strip()]


def _form(
    page: Page,
    name: str,
    rows: list[ParamMapping],
    errors: dict[str, str],
    source: TrafficSource | None = None,
    *,
    network: str = "",
    status_code: int = 200,
) -> Response:
    context = {
        "section": "sources",
        "source": source,
        "name": name,
        "rows": rows,
        "blank_rows": BLANK_ROWS if not rows else 1,
        "errors": errors,
        "known_fields": ["name", *(key for key in errors if key.startswith("params["))],
        "fields": DIMENSIONS,
        "networks": AD_NETWORKS,
        "network": AD_NETWORKS.get(network),
    }
    return render(page, "dashboard/sources/form.html", context, status_code=status_code)
