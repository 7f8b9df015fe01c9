"""Putting sales in place for the postback pages' browser tests: merchants, real clicks on the
live server, and postbacks sent to it as Hotmart or a generic platform would send them."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign, now
from trilha.campaigns import Campaign
from trilha.merchants import MerchantRow, create_merchant
from trilha.workspaces import Workspace

HOTTOK = "hottok-Segredo-9f8e7d"


async def make_merchant(db: AsyncEngine, workspace: Workspace, **fields: Any) -> MerchantRow:
    fields.setdefault("key", "hotmart")
    fields.setdefault("name", "Hotmart")
    fields.setdefault("preset", "hotmart")
    async with db.begin() as conn:
        return await create_merchant(conn, workspace.id, now=now(), **fields)


async def make_click(
    db: AsyncEngine, live_server: str, workspace: Workspace, **campaign: Any
) -> tuple[Campaign, str]:
    """A campaign and a click on its tracking link, through the live redirect."""
    made = await make_campaign(db, workspace, **campaign)
    async with httpx.AsyncClient() as client:
        await client.get(f"{live_server}/r/{made.slug}")
    rows = await fetch_clicks(db, campaign_id=made.id)
    return made, str(rows[-1]["id"])


def hotmart_sale(
    click_id: str,
    *,
    event: str = "PURCHASE_APPROVED",
    txid: str = "HP-0001",
    value: float = 97.0,
    hottok: str | None = HOTTOK,
) -> dict[str, Any]:
    """A Hotmart webhook 2.0.0 body, cut down to what trilha and a reader of the log need."""
    price = {"value": value, "currency_value": "BRL"}
    body: dict[str, Any] = {
        "id": f"evt-{txid}-{event}",
        "event": event,
        "version": "2.0.0",
        "data": {
            "buyer": {"name": "Comprador Teste", "email": "comprador@example.com"},
            "purchase": {
                "transaction": txid,
                "status": event.removeprefix("PURCHASE_"),
                "price": price,
                "origin": {"sck": click_id},
            },
            "commissions": [{"source": "PRODUCER", "value": round(value * 0.9, 2)}],
        },
    }
    return body | ({"hottok": hottok} if hottok else {})


async def send_hotmart(url: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST the body as Hotmart does, the hottok also in its header; the JSON answer."""
    headers = {"x-hotmart-hottok": body["hottok"]} if "hottok" in body else {}
    async with httpx.AsyncClient() as client:
        response = await client.post(url, json=body, headers=headers)
    answer: dict[str, Any] = response.json()
    return answer


async def send_generic(live_server: str, workspace: Workspace, **params: str) -> dict[str, Any]:
    """GET /pb?token=... with the given parameters, as a generic platform does."""
    async with httpx.AsyncClient() as client:
        response = await client.get(
            f"{live_server}/pb", params={"token": workspace.postback_token, **params}
        )
    answer: dict[str, Any] = response.json()
    return answer
