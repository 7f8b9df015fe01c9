"""The click log: the latest clicks, live while the first page is open, filtered; one click with
all its parameters and its conversions."""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Response

from trilha.campaigns import list_sources
from trilha.click_log import ClickFilter, get_click_detail, list_click_log
from trilha.dimensions import DIMENSIONS, SUBS
from trilha.web.auth import Db
from trilha.web.dashboard.conversions import workspace_names
from trilha.web.dashboard.pages import InWorkspace
from trilha.web.dashboard.responses import DashboardRoute, render

router = APIRouter(route_class=DashboardRoute)

PAGE_SIZE = 50
FILTERS = (
    "campaign_id",
    "source_id",
    "from",
    "to",
    "sub",
    "sub_value",
    "country",
    "device",
    "bot",
    "converted",
)
FILTER_LENGTH = 200
CHOICES = {"yes": True, "no": False}
DEVICES = ("desktop", "mobile", "tablet", "bot")


@router.get("/w/{workspace_id}/clicks")
async def click_log_page(page: InWorkspace, conn: Db) -> Response:
    params = page.request.query_params
    filters = {name: params.get(name, "").strip()[:FILTER_LENGTH] for name in FILTERS}
    before = params.get("before", "")[:FILTER_LENGTH] or None
    where = click_filter(filters, before)
    workspace = page.workspace
    found = await list_click_log(conn, workspace.id, workspace.timezone, where, limit=PAGE_SIZE + 1)
    shown = found[:PAGE_SIZE]
    query = {name: value for name, value in filters.items() if value}
    older = None
    if len(found) > PAGE_SIZE:
        older = f"?{urlencode({**query, 'before': shown[-1].id})}"
    context: dict[str, Any] = {
        "section": "clicks",
        "clicks": shown,
        "filters": filters,
        "is_filtered": bool(query) or before is not None,
        "is_live": before is None,
        "live_url": f"/w/{workspace.id}/clicks?{urlencode(query)}",
        "older_url": older,
        "subs": SUBS,
        "devices": DEVICES,
        "source_names": {s.id: s.name for s in await list_sources(conn, workspace)},
        **await workspace_names(page, conn),
    }
    # htmx's polling asks for the table alone.
    partial = page.request.headers.get("hx-request") == "true"
    template = "dashboard/clicks/table.html" if partial else "dashboard/clicks/list.html"
    return render(page, template, context)


@router.get("/w/{workspace_id}/clicks/{click_id}")
async def click_page(click_id: str, page: InWorkspace, conn: Db) -> Response:
    detail = await get_click_detail(conn, page.workspace.id, click_id)
    context = {
        "section": "clicks",
        "click": detail.row,
        "conversions": detail.conversions,
        "parameters": [
            *((name, detail.row[name]) for name in DIMENSIONS if detail.row[name]),
            *detail.row["params"].items(),
        ],
        "source_names": {s.id: s.name for s in await list_sources(conn, page.workspace)},
        **await workspace_names(page, conn),
    }
    return render(page, "dashboard/clicks/detail.html", context)


def click_filter(filters: dict[str, str], before: str | None) -> ClickFilter:
    """The log's filters from the form; a value that means nothing (a bad date) leaves its
    filter out."""
    sub = filters["sub"]
    return ClickFilter(
        campaign_id=filters["campaign_id"] or None,
        source_id=filters["source_id"] or None,
        country=filters["country"].upper() or None,
        device_type=filters["device"] or None,
        subs={sub: filters["sub_value"]} if sub in SUBS and filters["sub_value"] else {},
        is_bot=CHOICES.get(filters["bot"]),
        converted=CHOICES.get(filters["converted"]),
        from_day=_day(filters["from"]),
        to_day=_day(filters["to"]),
        before_id=before,
    )


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None
