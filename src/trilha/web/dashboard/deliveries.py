"""The delivery log in the dashboard: every delivery with its attempts, and retrying one."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from fastapi import APIRouter, Response

from trilha.deliveries.destinations import list_destinations
from trilha.deliveries.kinds import DeliveryState
from trilha.deliveries.log import DeliveryFilter, get_delivery, list_deliveries, retry_delivery
from trilha.web.auth import Db
from trilha.web.dashboard.pages import InWorkspace
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

PAGE_SIZE = 50


@router.get("/w/{workspace_id}/deliveries")
async def delivery_list(
    page: InWorkspace,
    conn: Db,
    destination: str = "",
    state: str = "",
    txid: str = "",
    conversion: str = "",
    before: str = "",
) -> Response:
    txid = txid.strip()
    where = DeliveryFilter(
        destination_id=destination or None,
        conversion_id=conversion or None,
        txid=txid or None,
        state=DeliveryState(state) if state in {s.value for s in DeliveryState} else None,
        before_id=before or None,
    )
    rows = await list_deliveries(conn, page.workspace, where, limit=PAGE_SIZE + 1)
    older = None
    if len(rows) > PAGE_SIZE:
        chosen = (("destination", destination), ("state", state), ("txid", txid))
        filters = {k: v for k, v in (*chosen, ("conversion", conversion)) if v}
        older = f"?{urlencode({**filters, 'before': rows[PAGE_SIZE - 1]['id']})}"
    context = {
        "section": "destinations",
        "deliveries": rows[:PAGE_SIZE],
        "destinations": await list_destinations(conn, page.workspace),
        "filters": {
            "destination": destination,
            "state": state,
            "txid": txid,
            "conversion": conversion,
        },
        "states": [s.value for s in DeliveryState],
        "older_url": older,
    }
    return render(page, "dashboard/deliveries/list.html", context)


@router.get("/w/{workspace_id}/deliveries/{delivery_id}")
async def delivery_detail(delivery_id: str, page: InWorkspace, conn: Db) -> Response:
    found = await get_delivery(conn, page.workspace, delivery_id)
    return render(
        page, "dashboard/deliveries/detail.html", {"section": "destinations", "delivery": found}
    )


@router.post("/w/{workspace_id}/deliveries/{delivery_id}/retry")
async def retry(delivery_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    found = await retry_delivery(conn, page.workspace, delivery_id, now=datetime.now(UTC))
    url = f"/w/{page.workspace.id}/deliveries/{found['id']}"
    return redirect(page, url, "deliveries.retried")
