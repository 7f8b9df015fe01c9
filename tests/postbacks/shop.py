"""A workspace selling through one merchant, with a real click, and the checks that every platform
test repeats: the stored conversion, its status history, and a log that keeps no secret."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, urlencode, urlsplit

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign, make_workspace, now
from trilha.campaigns import Campaign, update_campaign
from trilha.db.schema import conversion_status_history, conversions, postback_log
from trilha.merchants import MerchantRow, create_merchant
from trilha.workspaces import Workspace


@dataclass(frozen=True, slots=True)
class Shop:
    workspace: Workspace
    merchant: MerchantRow
    campaign: Campaign
    click_id: str  # read back from the offer URL the redirect sent the visitor to

    @property
    def url(self) -> str:
        """The postback URL pasted in the platform's panel, without its query string."""
        return f"/pb/{self.merchant.key}"

    @property
    def token(self) -> dict[str, str]:
        return {"token": self.workspace.postback_token}


async def make_merchant(
    db: AsyncEngine, workspace: Workspace, *, preset: str, **fields: Any
) -> MerchantRow:
    fields.setdefault("key", preset)
    fields.setdefault("name", f"Loja na {preset}")
    async with db.begin() as conn:
        return await create_merchant(conn, workspace.id, now=now(), preset=preset, **fields)


async def click_through(
    client: httpx.AsyncClient, db: AsyncEngine, campaign: Campaign, *, param: str
) -> str:
    """Click the tracking link and return the click id the offer URL carries in ``param``."""
    response = await client.get(f"/r/{campaign.slug}")
    assert response.status_code == 302
    [click_id] = parse_qs(urlsplit(response.headers["location"]).query)[param]
    stored = {row["id"] for row in await fetch_clicks(db, campaign_id=campaign.id)}
    assert click_id in stored
    return click_id


async def open_shop(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    *,
    preset: str,
    offer_url: str,
    click_param: str,
    workspace_currency: str = "BRL",
    **merchant_fields: Any,
) -> Shop:
    """A workspace, a merchant on ``preset`` and a campaign sending visitors to ``offer_url``
    (with ``{click_id}`` in ``click_param``), and one real click through its tracking link."""
    workspace = await make_workspace(db, currency=workspace_currency)
    merchant = await make_merchant(db, workspace, preset=preset, **merchant_fields)
    campaign = await make_campaign(db, workspace, offer_url=offer_url)
    click_id = await click_through(client, db, campaign, param=click_param)
    return Shop(workspace, merchant, campaign, click_id)


async def sell_through_merchant(db: AsyncEngine, shop: Shop) -> Campaign:
    """Set the campaign's merchant, as a user does on the campaign form."""
    async with db.begin() as conn:
        return await update_campaign(
            conn, shop.workspace, shop.campaign.id, now=now(), merchant_id=shop.merchant.id
        )


async def only_conversion(db: AsyncEngine) -> dict[str, Any]:
    [conversion] = await fetch_all(db, conversions)
    return conversion


async def status_history(db: AsyncEngine, conversion_id: str) -> list[tuple[str | None, str]]:
    rows = await fetch_all(db, conversion_status_history, conversion_id=conversion_id)
    rows.sort(key=lambda row: row["created_at"])
    return [(row["from_status"], row["to_status"]) for row in rows]


async def log_entries(db: AsyncEngine) -> list[dict[str, Any]]:
    """The postback log, oldest first."""
    return sorted(await fetch_all(db, postback_log), key=lambda entry: entry["received_at"])


def spellings(secret: str) -> set[str]:
    """The secret as it may sit in a stored request: plain, percent-encoded, JSON-escaped."""
    escaped = json.dumps(secret)[1:-1]
    texts = {secret, escaped, escaped.replace("/", "\\/")}
    return texts | {quote(t, safe="") for t in texts} | {quote_plus(t) for t in texts}


async def assert_log_keeps_no_secret(db: AsyncEngine, *secrets: str) -> None:
    """No stored request (query, headers, body, reason, anything) holds any of ``secrets``."""
    entries = await fetch_all(db, postback_log)
    assert entries
    for entry in entries:
        stored = json.dumps(entry, default=str, ensure_ascii=False)
        for secret in secrets:
            for spelling in spellings(secret):
                assert spelling not in stored, f"{spelling!r} is stored in the postback log"
                assert spelling not in entry["query"]
                assert spelling not in entry["body"]
                assert spelling not in entry["reason"]
                assert all(spelling not in value for _, value in entry["headers"])


def php_form(tree: Mapping[Any, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Flatten nested fields into bracket keys, as PHP's http_build_query does.

    >>> php_form({"venda": {"codigo": 7}, "itens": [{"id": 1}], "cupom": None})
    [('venda[codigo]', '7'), ('itens[0][id]', '1')]
    """
    pairs: list[tuple[str, str]] = []
    for key, value in tree.items():
        name = f"{prefix}[{key}]" if prefix else str(key)
        if isinstance(value, Mapping):
            pairs.extend(php_form(value, name))
        elif isinstance(value, list):
            pairs.extend(php_form(dict(enumerate(value)), name))
        elif isinstance(value, bool):
            pairs.append((name, "1" if value else "0"))
        elif value is not None:  # http_build_query leaves nulls out
            pairs.append((name, str(value)))
    return pairs


def form_body(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """httpx keyword arguments that POST ``pairs`` as application/x-www-form-urlencoded."""
    return {
        "content": urlencode(pairs).encode(),
        "headers": {"content-type": "application/x-www-form-urlencoded"},
    }
