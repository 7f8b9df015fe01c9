"""Conversions: the list with status and value, one conversion with its status history, and
attaching an orphan to the click it came from."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.campaigns import list_campaigns
from trilha.conversions.lookup import (
    ConversionFilter,
    get_conversion,
    list_conversions,
    status_history,
)
from trilha.conversions.orphans import attach_orphan
from trilha.conversions.status import Status
from trilha.conversions.tests import delete_test_conversion
from trilha.deliveries.log import DeliveryFilter, list_deliveries
from trilha.errors import InvalidInput
from trilha.merchants import list_merchants
from trilha.web.auth import Db
from trilha.web.dashboard.pages import InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

PAGE_SIZE = 50
ORPHAN_CHOICES = {"yes": True, "no": False}
DELIVERIES = 20  # a conversion's latest deliveries on its page; the delivery log has them all


@router.get("/w/{workspace_id}/conversions")
async def conversion_list(
    page: InWorkspace, conn: Db, status: str = "", orphan: str = "", before: str = ""
) -> Response:
    where = ConversionFilter(
        status=status if status in set(Status) else None,
        orphan=ORPHAN_CHOICES.get(orphan),
        before_id=before or None,
    )
    rows = await list_conversions(conn, page.workspace.id, where, limit=PAGE_SIZE + 1)
    older = None
    if len(rows) > PAGE_SIZE:
        filters = {k: v for k, v in (("status", status), ("orphan", orphan)) if v}
        older = f"?{urlencode({**filters, 'before': rows[PAGE_SIZE - 1].id})}"
    context = {
        "section": "conversions",
        "conversions": rows[:PAGE_SIZE],
        "filters": {"status": status, "orphan": orphan},
        "is_filtered": bool(status or orphan or before),
        "statuses": [s.value for s in Status],
        "older_url": older,
        **await workspace_names(page, conn),
    }
    return render(page, "dashboard/conversions/list.html", context)


@router.get("/w/{workspace_id}/conversions/{conversion_id}")
async def conversion_detail(conversion_id: str, page: InWorkspace, conn: Db) -> Response:
    return await _detail(page, conn, conversion_id, {}, {})


@router.post("/w/{workspace_id}/conversions/{conversion_id}/attach")
async def attach(conversion_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    click_id = (await read_form(page.request))["click_id"].strip()
    try:
        await conn.run_sync(
            attach_orphan, page.workspace.id, conversion_id, click_id, now=datetime.now(UTC)
        )
    except InvalidInput as exc:
        values = {"click_id": click_id}
        return await _detail(page, conn, conversion_id, values, field_errors(exc), 422)
    url = f"/w/{page.workspace.id}/conversions/{conversion_id}"
    return redirect(page, url, "conversions.attached", click_id=click_id)


@router.post("/w/{workspace_id}/conversions/{conversion_id}/delete")
async def delete_test(conversion_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    await conn.run_sync(delete_test_conversion, page.workspace.id, conversion_id)
    return redirect(page, f"/w/{page.workspace.id}/conversions", "conversions.test_deleted")


async def workspace_names(page: Page, conn: AsyncConnection) -> dict[str, dict[str, str]]:
    """Merchant and campaign names by id, for pages that list rows pointing at them."""
    merchants = await list_merchants(conn, page.workspace.id)
    campaigns = await list_campaigns(conn, page.workspace)
    return {
        "merchant_names": {m.id: m.name for m in merchants},
        "campaign_names": {c.id: c.name for c in campaigns},
    }


async def _detail(
    page: Page,
    conn: AsyncConnection,
    conversion_id: str,
    values: dict[str, str],
    errors: dict[str, str],
    status_code: int = 200,
) -> Response:
    conversion = await get_conversion(conn, page.workspace.id, conversion_id)
    context: dict[str, Any] = {
        "section": "conversions",
        "conversion": conversion,
        "history": await status_history(conn, conversion.id),
        "recent": await list_deliveries(
            conn, page.workspace, DeliveryFilter(conversion_id=conversion.id), limit=DELIVERIES
        ),
        "values": values or {"click_id": ""},
        "errors": errors,
        **await workspace_names(page, conn),
    }
    return render(page, "dashboard/conversions/detail.html", context, status_code=status_code)
