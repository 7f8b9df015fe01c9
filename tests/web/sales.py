"""Sales for API tests, made the real way: a click through /r/{slug}, then a postback to /pb."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign
from tests.web.callers import Caller
from trilha.campaigns import Campaign
from trilha.workspaces import Workspace


async def click(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    workspace: Workspace,
    campaign: Campaign | None = None,
) -> tuple[Campaign, str]:
    """A click on ``campaign`` (a new one if None), and the click id its offer URL received."""
    campaign = campaign or await make_campaign(db, workspace)
    response = await client.get(f"/r/{campaign.slug}")
    assert response.status_code == 302
    [click_id] = parse_qs(urlsplit(response.headers["location"]).query)["src"]
    return campaign, click_id


async def postback(
    client: httpx.AsyncClient, workspace: Workspace, path: str = "/pb", **params: str
) -> dict[str, Any]:
    """A generic GET postback, as a tracker or a custom checkout sends it; its JSON answer."""
    response = await client.get(path, params={"token": workspace.postback_token, **params})
    answer: dict[str, Any] = response.json()
    return answer


async def create_merchant(
    client: httpx.AsyncClient, caller: Caller, workspace: Workspace, **fields: Any
) -> dict[str, Any]:
    fields.setdefault("name", f"Loja {fields['key']}")
    response = await client.post(
        f"/api/v1/workspaces/{workspace.id}/merchants", json=fields, headers=caller.headers
    )
    assert response.status_code == 201, response.text
    merchant: dict[str, Any] = response.json()
    return merchant
