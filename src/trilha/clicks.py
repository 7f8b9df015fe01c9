"""A click: what it records and the offer URL it sends the visitor to."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import JSON, Select, bindparam, func, literal_column, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import DIMENSIONS, clicks
from trilha.errors import NotFound
from trilha.ids import mint_click_id
from trilha.links import Link
from trilha.macros import fill_macros, unknown_macros
from trilha.visitors import Device, Visitor

UNIQUE_WINDOW = timedelta(hours=24)
MAX_PARAMS = 64
MAX_NAME_LENGTH = 64
MAX_VALUE_LENGTH = 1024


@dataclass(frozen=True, slots=True)
class ClickRequest:
    """One visit to a tracking link, as the redirect saw it."""

    host: str
    slug: str
    visitor: Visitor
    params: Mapping[str, str]
    now: datetime


def clean_params(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Keep the first value of each parameter, within size limits, without NUL characters.

    >>> clean_params([("sub1", "a"), ("sub1", "b"), ("x\\x00", "y")])
    {'sub1': 'a', 'x': 'y'}
    """
    params: dict[str, str] = {}
    for name, value in pairs:
        name = name.replace("\x00", "")[:MAX_NAME_LENGTH]
        if name and name not in params and len(params) < MAX_PARAMS:
            params[name] = value.replace("\x00", "")[:MAX_VALUE_LENGTH]
    return params


def click_dimensions(link: Link, params: Mapping[str, str]) -> dict[str, str | None]:
    """Fill each click field from its query parameter, or from the source's own name for it."""
    dimensions: dict[str, str | None] = {name: params.get(name) for name in DIMENSIONS}
    for param, field in link.source_params:
        if field in dimensions and param in params:
            dimensions[field] = params[param]
    return dimensions


def build_click(
    link: Link, request: ClickRequest, *, click_id: str, is_unique: bool
) -> dict[str, Any]:
    visitor = request.visitor
    dimensions = click_dimensions(link, request.params)
    used = set(dimensions).union(param for param, _ in link.source_params)
    return {
        "id": click_id,
        "workspace_id": link.workspace_id,
        "campaign_id": link.campaign_id,
        "source_id": link.source_id,
        "created_at": request.now,
        "ip": visitor.ip,
        "user_agent": visitor.user_agent,
        "visitor_key": visitor.key,
        "device_type": visitor.device.device_type,
        "os": visitor.device.os,
        "browser": visitor.device.browser,
        "country": visitor.country,
        "referrer": visitor.referrer,
        "is_bot": visitor.device.is_bot,
        "is_unique": is_unique,
        **dimensions,
        "params": {k: v for k, v in request.params.items() if k not in used},
    }


def macro_values(link: Link, click: Mapping[str, Any], params: Mapping[str, str]) -> dict[str, str]:
    """Every macro's value for one click: incoming parameters, overridden by built-ins."""
    created_at: datetime = click["created_at"]
    values = dict(params)
    values.update({name: click[name] or "" for name in DIMENSIONS})
    values.update(
        click_id=click["id"],
        campaign_id=link.campaign_id,
        campaign_name=link.name,
        campaign_slug=link.slug,
        source=link.source_name,
        source_id=link.source_id or "",
        device=click["device_type"],
        os=click["os"],
        browser=click["browser"],
        country=click["country"],
        ip=click["ip"],
        user_agent=click["user_agent"],
        referrer=click["referrer"],
        timestamp=str(int(created_at.timestamp())),
        date=created_at.astimezone(ZoneInfo(link.timezone)).date().isoformat(),
        random=str(secrets.randbelow(1_000_000_000)),
    )
    return values


def offer_url(link: Link, click: Mapping[str, Any], params: Mapping[str, str]) -> str:
    return fill_macros(link.offer_url, macro_values(link, click, params))


async def record_clicks(
    conn: AsyncConnection, batch: Sequence[tuple[Link, ClickRequest]]
) -> list[dict[str, Any]]:
    """Insert one batch of clicks; a visitor seen on the campaign in the last 24 h is not unique."""
    seen = await _recent_visitors(conn, batch)
    rows = []
    for link, request in batch:
        key = (link.campaign_id, request.visitor.key)
        click_id = mint_click_id(request.now)
        rows.append(build_click(link, request, click_id=click_id, is_unique=key not in seen))
        seen.add(key)
    if rows:
        await conn.execute(clicks.insert(), rows)
    return rows


async def _recent_visitors(
    conn: AsyncConnection, batch: Sequence[tuple[Link, ClickRequest]]
) -> set[tuple[str, str]]:
    by_campaign: dict[str, set[str]] = {}
    for link, request in batch:
        by_campaign.setdefault(link.campaign_id, set()).add(request.visitor.key)
    oldest = min((request.now for _, request in batch), default=datetime.now(UTC))
    query = _recent_visitors_query(conn.dialect.name)
    seen: set[tuple[str, str]] = set()
    for campaign_id, keys in by_campaign.items():
        result = await conn.execute(
            query,
            {"keys": sorted(keys), "campaign_id": campaign_id, "since": oldest - UNIQUE_WINDOW},
        )
        seen.update((campaign_id, key) for key in result.scalars())
    return seen


@lru_cache
def _recent_visitors_query(dialect: str) -> Select[str]:
    """Which of a list of visitor keys clicked a campaign since a time.

    Each key costs one index probe that stops at its first click: a DISTINCT over the matching
    clicks would read every click of a visitor who clicked ten thousand times. A scalar subquery
    with LIMIT 1 rather than EXISTS, so that PostgreSQL cannot turn it into a hash join over all
    the campaign's clicks when its statistics are stale (a young, fast-growing clicks table).
    """
    elements = func.json_array_elements_text if dialect == "postgresql" else func.json_each
    keys = elements(bindparam("keys", type_=JSON)).table_valued("value")
    first_click = (
        select(literal_column("1"))
        .where(
            clicks.c.campaign_id == bindparam("campaign_id"),
            clicks.c.visitor_key == keys.c.value,
            clicks.c.created_at > bindparam("since", type_=clicks.c.created_at.type),
        )
        .limit(1)
        .scalar_subquery()
    )
    return select(keys.c.value).where(first_click.is_not(None))


@dataclass(frozen=True, slots=True)
class Preview:
    url: str
    unknown_macros: tuple[str, ...]


SAMPLE_VISITOR = Visitor(
    ip="203.0.113.7",
    user_agent="Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148",
    referrer="https://m.facebook.com/",
    device=Device(device_type="mobile", os="iOS", browser="Mobile Safari", is_bot=False),
    country="BR",
)


def preview_offer_url(
    template: str,
    params: Mapping[str, str],
    *,
    campaign_name: str = "Campaign",
    slug: str = "slug",
    timezone: str = "America/Sao_Paulo",
    now: datetime,
) -> Preview:
    """The URL a click with these query parameters would go to, and the macros nothing fills."""
    link = Link(
        campaign_id="CAMPAIGN_ID",
        workspace_id="",
        name=campaign_name,
        slug=slug,
        offer_url=template,
        source_id=None,
        source_name="",
        source_params=(),
        timezone=timezone,
    )
    request = ClickRequest(host="", slug=slug, visitor=SAMPLE_VISITOR, params=params, now=now)
    click = build_click(link, request, click_id=mint_click_id(), is_unique=True)
    return Preview(offer_url(link, click, params), unknown_macros(template, params))


async def list_clicks(
    conn: AsyncConnection,
    workspace_id: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    campaign_id: str | None = None,
    click_id: str | None = None,
    before_id: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """Newest first; pass the last id of a page as ``before_id`` for the next page."""
    query = select(clicks).where(clicks.c.workspace_id == workspace_id)
    if since is not None:
        query = query.where(clicks.c.created_at >= since)
    if until is not None:
        query = query.where(clicks.c.created_at < until)
    if campaign_id is not None:
        query = query.where(clicks.c.campaign_id == campaign_id)
    if click_id is not None:
        query = query.where(clicks.c.id == click_id)
    if before_id is not None:
        query = query.where(clicks.c.id < before_id)
    rows = await conn.execute(query.order_by(clicks.c.id.desc()).limit(limit))
    return [dict(row) for row in rows.mappings()]


async def get_click(conn: AsyncConnection, workspace_id: str, click_id: str) -> dict[str, Any]:
    query = select(clicks).where(clicks.c.workspace_id == workspace_id, clicks.c.id == click_id)
    row = (await conn.execute(query)).mappings().first()
    if row is None:
        raise NotFound("click not found")
    return dict(row)
