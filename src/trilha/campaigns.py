"""Traffic sources and campaigns: what a tracking link records and where it sends visitors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.custom_domains import DomainStatus
from trilha.db.schema import campaigns, clicks, domains, merchants, traffic_sources
from trilha.dimensions import DIMENSIONS
from trilha.errors import Conflict, InvalidInput, NotFound
from trilha.ids import new_id
from trilha.links import DEFAULT_HOST
from trilha.validation import (
    NAME_MAX,
    optional_http_url,
    require_slug,
    require_text,
    require_url_template,
)
from trilha.workspaces import Workspace

PARAM_NAME_MAX = 64


class CampaignStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


@dataclass(frozen=True, slots=True)
class ParamMapping:
    """Query parameter ``param`` of the source's links feeds the click field ``field``."""

    param: str
    field: str


@dataclass(frozen=True, slots=True)
class TrafficSource:
    id: str
    name: str
    params: tuple[ParamMapping, ...]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Campaign:
    id: str
    name: str
    slug: str
    host: str
    offer_url: str
    source_id: str | None
    merchant_id: str | None
    status: CampaignStatus
    fallback_url: str | None
    created_at: datetime
    updated_at: datetime

    def tracking_url(self, public_url: str) -> str:
        base = f"https://{self.host}" if self.host else public_url
        return f"{base}/r/{self.slug}"


def check_param_mappings(mappings: Sequence[ParamMapping]) -> tuple[ParamMapping, ...]:
    seen: set[str] = set()
    for index, mapping in enumerate(mappings):
        field = f"params[{index}]"
        if not mapping.param or len(mapping.param) > PARAM_NAME_MAX:
            raise InvalidInput({f"{field}.param": f"must be 1 to {PARAM_NAME_MAX} characters"})
        if mapping.field not in DIMENSIONS:
            raise InvalidInput({f"{field}.field": f"must be one of: {', '.join(DIMENSIONS)}"})
        if mapping.param in seen:
            raise InvalidInput({f"{field}.param": f"{mapping.param!r} is mapped twice"})
        seen.add(mapping.param)
    return tuple(mappings)


def _source(row: object) -> TrafficSource:
    params = tuple(ParamMapping(str(p["param"]), str(p["field"])) for p in row.params)  # type: ignore[attr-defined]
    return TrafficSource(id=row.id, name=row.name, params=params, created_at=row.created_at)  # type: ignore[attr-defined]


async def create_source(
    conn: AsyncConnection,
    workspace: Workspace,
    *,
    name: str,
    params: Sequence[ParamMapping],
    now: datetime,
) -> TrafficSource:
    source = TrafficSource(
        new_id(), require_text(name, "name", max_length=NAME_MAX), check_param_mappings(params), now
    )
    try:
        async with conn.begin_nested():
            await conn.execute(
                traffic_sources.insert().values(
                    id=source.id,
                    workspace_id=workspace.id,
                    name=source.name,
                    params=[{"param": p.param, "field": p.field} for p in source.params],
                    created_at=now,
                )
            )
    except IntegrityError:
        raise Conflict("a traffic source with this name exists", field="name") from None
    return source


async def list_sources(conn: AsyncConnection, workspace: Workspace) -> list[TrafficSource]:
    rows = await conn.execute(
        select(traffic_sources)
        .where(traffic_sources.c.workspace_id == workspace.id)
        .order_by(traffic_sources.c.name)
    )
    return [_source(row) for row in rows]


async def source_keys(conn: AsyncConnection, workspace: Workspace) -> dict[str, str]:
    """Each traffic source's id, by its name and by its id: how a file may name a source."""
    keys: dict[str, str] = {}
    for source in await list_sources(conn, workspace):
        keys[source.name] = keys[source.id] = source.id
    return keys


async def get_source(conn: AsyncConnection, workspace: Workspace, source_id: str) -> TrafficSource:
    row = (
        await conn.execute(
            select(traffic_sources).where(
                traffic_sources.c.id == source_id, traffic_sources.c.workspace_id == workspace.id
            )
        )
    ).first()
    if row is None:
        raise NotFound("traffic source not found")
    return _source(row)


async def update_source(
    conn: AsyncConnection,
    workspace: Workspace,
    source_id: str,
    *,
    name: str | None = None,
    params: Sequence[ParamMapping] | None = None,
) -> TrafficSource:
    await get_source(conn, workspace, source_id)
    values: dict[str, object] = {}
    if name is not None:
        values["name"] = require_text(name, "name", max_length=NAME_MAX)
    if params is not None:
        values["params"] = [
            {"param": p.param, "field": p.field} for p in check_param_mappings(params)
        ]
    if values:
        try:
            async with conn.begin_nested():
                await conn.execute(
                    update(traffic_sources)
                    .where(traffic_sources.c.id == source_id)
                    .values(**values)
                )
        except IntegrityError:
            raise Conflict("a traffic source with this name exists", field="name") from None
    return await get_source(conn, workspace, source_id)


async def delete_source(conn: AsyncConnection, workspace: Workspace, source_id: str) -> None:
    await get_source(conn, workspace, source_id)
    await conn.execute(delete(traffic_sources).where(traffic_sources.c.id == source_id))


def _campaign(row: object) -> Campaign:
    fields = {f: getattr(row, f) for f in Campaign.__dataclass_fields__}
    fields["status"] = CampaignStatus(fields["status"])
    return Campaign(**fields)


async def _check_refs(
    conn: AsyncConnection,
    workspace: Workspace,
    *,
    source_id: str | None,
    host: str | None,
    merchant_id: str | None = None,
) -> None:
    if merchant_id is not None:
        owner = (
            await conn.execute(
                select(merchants.c.workspace_id).where(merchants.c.id == merchant_id)
            )
        ).scalar()
        if owner != workspace.id:
            raise InvalidInput({"merchant_id": "no such merchant in this workspace"})
    if source_id is not None:
        try:
            await get_source(conn, workspace, source_id)
        except NotFound:
            raise InvalidInput({"source_id": "no such traffic source in this workspace"}) from None
    if host:
        verified = select(domains.c.id).where(
            domains.c.workspace_id == workspace.id,
            domains.c.host == host,
            domains.c.status == DomainStatus.VERIFIED,
        )
        if (await conn.execute(verified)).first() is None:
            raise InvalidInput({"host": "add this domain to the workspace and verify it first"})


async def create_campaign(
    conn: AsyncConnection,
    workspace: Workspace,
    *,
    name: str,
    slug: str,
    offer_url: str,
    source_id: str | None = None,
    merchant_id: str | None = None,
    host: str = DEFAULT_HOST,
    status: CampaignStatus = CampaignStatus.ACTIVE,
    fallback_url: str | None = None,
    now: datetime,
) -> Campaign:
    campaign = Campaign(
        id=new_id(),
        name=require_text(name, "name"),
        slug=require_slug(slug),
        host=host.strip().lower(),
        offer_url=require_url_template(offer_url, "offer_url"),
        source_id=source_id or None,
        merchant_id=merchant_id or None,
        status=CampaignStatus(status),
        fallback_url=optional_http_url(fallback_url, "fallback_url"),
        created_at=now,
        updated_at=now,
    )
    await _check_refs(
        conn,
        workspace,
        source_id=campaign.source_id,
        host=campaign.host,
        merchant_id=campaign.merchant_id,
    )
    values = {f: getattr(campaign, f) for f in Campaign.__dataclass_fields__}
    try:
        async with conn.begin_nested():
            await conn.execute(campaigns.insert().values(workspace_id=workspace.id, **values))
    except IntegrityError:
        raise Conflict("this slug is already in use on this domain", field="slug") from None
    return campaign


async def list_campaigns(conn: AsyncConnection, workspace: Workspace) -> list[Campaign]:
    rows = await conn.execute(
        select(campaigns)
        .where(campaigns.c.workspace_id == workspace.id)
        .order_by(campaigns.c.created_at.desc(), campaigns.c.id)
    )
    return [_campaign(row) for row in rows]


async def get_campaign(conn: AsyncConnection, workspace: Workspace, campaign_id: str) -> Campaign:
    row = (
        await conn.execute(
            select(campaigns).where(
                campaigns.c.id == campaign_id, campaigns.c.workspace_id == workspace.id
            )
        )
    ).first()
    if row is None:
        raise NotFound("campaign not found")
    return _campaign(row)


async def update_campaign(
    conn: AsyncConnection,
    workspace: Workspace,
    campaign_id: str,
    *,
    now: datetime,
    **changes: object,
) -> Campaign:
    """Change the given fields (name, slug, host, offer_url, source_id, merchant_id, status,
    fallback_url)."""
    current = await get_campaign(conn, workspace, campaign_id)
    values = _campaign_changes(changes)
    source_id, host, merchant_id = (values.get(k) for k in ("source_id", "host", "merchant_id"))
    await _check_refs(
        conn,
        workspace,
        source_id=source_id if isinstance(source_id, str) else None,
        host=host if isinstance(host, str) else None,
        merchant_id=merchant_id if isinstance(merchant_id, str) else None,
    )
    if values:
        try:
            async with conn.begin_nested():
                await conn.execute(
                    update(campaigns)
                    .where(campaigns.c.id == current.id)
                    .values(updated_at=now, **values)
                )
        except IntegrityError:
            raise Conflict("this slug is already in use on this domain", field="slug") from None
    return await get_campaign(conn, workspace, campaign_id)


def _campaign_changes(changes: dict[str, object]) -> dict[str, object]:
    checks: dict[str, Callable[[object], object]] = {
        "name": lambda v: require_text(str(v), "name"),
        "slug": lambda v: require_slug(str(v)),
        "host": lambda v: str(v or "").strip().lower(),
        "offer_url": lambda v: require_url_template(str(v), "offer_url"),
        "source_id": lambda v: str(v) if v else None,
        "merchant_id": lambda v: str(v) if v else None,
        "status": _status,
        "fallback_url": lambda v: optional_http_url(None if v is None else str(v), "fallback_url"),
    }
    unknown = set(changes) - set(checks)
    if unknown:
        raise InvalidInput(dict.fromkeys(sorted(unknown), "is not a campaign field"))
    return {name: checks[name](value) for name, value in changes.items()}


def _status(value: object) -> CampaignStatus:
    try:
        return CampaignStatus(str(value))
    except ValueError:
        raise InvalidInput({"status": "must be 'active' or 'paused'"}) from None


async def delete_campaign(conn: AsyncConnection, workspace: Workspace, campaign_id: str) -> None:
    """Delete a campaign that never had a click; one with clicks can only be paused."""
    await get_campaign(conn, workspace, campaign_id)
    has_clicks = (
        await conn.execute(select(clicks.c.id).where(clicks.c.campaign_id == campaign_id).limit(1))
    ).first()
    if has_clicks:
        raise Conflict("this campaign has clicks, which would be lost; pause it instead")
    await conn.execute(delete(campaigns).where(campaigns.c.id == campaign_id))
