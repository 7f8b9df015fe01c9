"""Campaigns: the list with tracking links, the create/edit form, its live macro preview,
and pausing or activating a campaign."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.campaigns import (
    Campaign,
    CampaignStatus,
    create_campaign,
    get_campaign,
    list_campaigns,
    list_sources,
    update_campaign,
)
from trilha.clicks import preview_offer_url, query_params
from trilha.custom_domains import list_domains
from trilha.dimensions import CLICK_IDS, SUBS, UTMS
from trilha.errors import Conflict, InvalidInput
from trilha.i18n import Translator
from trilha.macros import BUILTIN_MACROS
from trilha.merchants import list_merchants
from trilha.validation import require_url_template
from trilha.web.auth import Db, Reports, runtime_of
from trilha.web.dashboard.pages import Form, InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.reports import CAMPAIGN_FIGURES, campaigns_today
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

FIELDS = ("name", "slug", "host", "offer_url", "source_id", "merchant_id", "status", "fallback_url")
SAMPLE_PARAMS = "utm_source=facebook&ad_id=120200000000&sub1=criativo-a"
NEW_CAMPAIGN = dict.fromkeys(FIELDS, "") | {"status": "active", "sample": SAMPLE_PARAMS}


@router.get("/w/{workspace_id}/campaigns")
async def campaign_list(page: InWorkspace, conn: Db, reports: Reports) -> Response:
    campaigns = await list_campaigns(conn, page.workspace)
    sources = {s.id: s.name for s in await list_sources(conn, page.workspace)}
    today = await campaigns_today(page, conn, reports)
    rows = [_row(page, campaign, sources, today) for campaign in campaigns]
    context = {"rows": rows, "section": "campaigns", "today_figures": CAMPAIGN_FIGURES}
    return render(page, "dashboard/campaigns/list.html", context)


@router.get("/w/{workspace_id}/campaigns/new")
async def new_campaign(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    return await _form(page, conn, NEW_CAMPAIGN, {})


@router.post("/w/{workspace_id}/campaigns/preview")
async def preview(page: InWorkspace) -> Response:
    values = _values(await read_form(page.request))
    return render(page, "partials/macro_preview.html", _preview(page, values))


@router.post("/w/{workspace_id}/campaigns")
async def add_campaign(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    values = _values(await read_form(page.request))
    try:
        campaign = await create_campaign(
            conn,
            page.workspace,
            name=values["name"],
            slug=values["slug"],
            host=values["host"],
            offer_url=values["offer_url"],
            source_id=values["source_id"] or None,
            merchant_id=values["merchant_id"] or None,
            status=CampaignStatus(values["status"]),
            fallback_url=values["fallback_url"] or None,
            now=datetime.now(UTC),
        )
    except (InvalidInput, Conflict) as exc:
        return await _form(page, conn, values, field_errors(exc), status_code=422)
    return redirect(page, _list_url(page), "campaigns.created", name=campaign.name)


@router.get("/w/{workspace_id}/campaigns/{campaign_id}")
async def edit_campaign(campaign_id: str, page: InWorkspace, conn: Db) -> Response:
    campaign = await get_campaign(conn, page.workspace, campaign_id)
    values = {name: str(getattr(campaign, name) or "") for name in FIELDS}
    return await _form(page, conn, values | {"sample": SAMPLE_PARAMS}, {}, campaign)


@router.post("/w/{workspace_id}/campaigns/{campaign_id}")
async def save_campaign(campaign_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    campaign = await get_campaign(conn, page.workspace, campaign_id)
    values = _values(await read_form(page.request))
    try:
        campaign = await update_campaign(
            conn, page.workspace, campaign.id, now=datetime.now(UTC), **_changes(values)
        )
    except (InvalidInput, Conflict) as exc:
        return await _form(page, conn, values, field_errors(exc), campaign, status_code=422)
    return redirect(page, _list_url(page), "campaigns.saved", name=campaign.name)


@router.post("/w/{workspace_id}/campaigns/{campaign_id}/status")
async def set_status(campaign_id: str, page: InWorkspace, conn: Db, reports: Reports) -> Response:
    """Pause or activate; htmx gets the campaign's new table row, a plain form a redirect."""
    page.require(Role.MEMBER)
    status = (await read_form(page.request))["status"]
    campaign = await update_campaign(
        conn, page.workspace, campaign_id, now=datetime.now(UTC), status=status
    )
    if page.request.headers.get("hx-request"):
        sources = {s.id: s.name for s in await list_sources(conn, page.workspace)}
        # Today's figures are read apart, so that the write lock is not held while they add up.
        async with runtime_of(page.request).read_engine.begin() as read:
            today = await campaigns_today(page, read, reports)
        context = {"row": _row(page, campaign, sources, today)}
        return render(page, "partials/campaign_row.html", context)
    key = "campaigns.paused" if campaign.status is CampaignStatus.PAUSED else "campaigns.activated"
    return redirect(page, _list_url(page), key, name=campaign.name)


def _list_url(page: Page) -> str:
    return f"/w/{page.workspace.id}/campaigns"


def _values(form: Form) -> dict[str, str]:
    values = {name: form[name] for name in (*FIELDS, "sample")}
    if values["status"] not in set(CampaignStatus):
        values["status"] = CampaignStatus.ACTIVE.value
    return values


def _changes(values: dict[str, str]) -> dict[str, str | None]:
    changes: dict[str, str | None] = {name: values[name] for name in FIELDS}
    changes["source_id"] = values["source_id"] or None
    changes["merchant_id"] = values["merchant_id"] or None
    changes["fallback_url"] = values["fallback_url"] or None
    return changes


def _row(
    page: Page,
    campaign: Campaign,
    sources: dict[str, str],
    today: dict[str, list[tuple[str, str]]],
) -> dict[str, object]:
    return {
        "campaign": campaign,
        "today": today.get(campaign.id, today[""]),
        "tracking_url": campaign.tracking_url(page.settings.base_url),
        "source": sources.get(campaign.source_id or ""),
    }


async def _form(
    page: Page,
    conn: AsyncConnection,
    values: dict[str, str],
    errors: dict[str, str],
    campaign: Campaign | None = None,
    *,
    status_code: int = 200,
) -> Response:
    context = {
        "section": "campaigns",
        "campaign": campaign,
        "tracking_url": campaign.tracking_url(page.settings.base_url) if campaign else None,
        "values": values,
        "errors": errors,
        "domains": await list_domains(conn, page.workspace),
        "sources": await list_sources(conn, page.workspace),
        "merchants": await list_merchants(conn, page.workspace.id),
        "default_host": urlsplit(page.settings.base_url).netloc,
        "macros": macro_descriptions(page.t),
        **_preview(page, values),
    }
    return render(page, "dashboard/campaigns/form.html", context, status_code=status_code)


def _preview(page: Page, values: dict[str, str]) -> dict[str, object]:
    template = values["offer_url"].strip()
    params = query_params(values["sample"].strip().lstrip("?"))
    result = preview_offer_url(
        template,
        params,
        campaign_name=values["name"] or "Campaign",
        slug=values["slug"] or "slug",
        timezone=page.workspace.timezone,
        now=datetime.now(UTC),
    )
    url_error = None
    if template:
        try:
            require_url_template(template, "offer_url")
        except InvalidInput as exc:
            url_error = exc.fields["offer_url"]
    return {"preview": result, "preview_empty": not template, "url_error": url_error}


def macro_descriptions(t: Translator) -> list[tuple[str, str]]:
    """Every built-in macro with what it holds, in the page's language."""
    rows = []
    for name in BUILTIN_MACROS:
        if name in SUBS:
            key = "macro.sub"
        elif name in UTMS:
            key = "macro.utm"
        elif name in CLICK_IDS:
            key = "macro.network_click_id"
        else:
            key = f"macro.{name}"
        rows.append((name, t(key, name=name)))
    return rows
