"""A campaign's costs: its cost model (and the versions before), the costs and impressions
entered per day, and their CSV import."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from trilha.campaigns import Campaign, get_campaign, list_sources, source_keys
from trilha.costs import days, models
from trilha.costs.imports import MAX_BYTES, read_cost_csv
from trilha.costs.models import CostModelKind
from trilha.costs.units import cost_text
from trilha.errors import InvalidInput
from trilha.event_types import list_event_types
from trilha.web.auth import Db, runtime_of
from trilha.web.dashboard.pages import Form, InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.web.limits import body_limit
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)
LISTED_DAYS = 60
URL = "/w/{workspace_id}/campaigns/{campaign_id}/costs"


@dataclass(frozen=True, slots=True)
class Sent:
    """What a form sent: its values, and their errors."""

    values: dict[str, Any]
    errors: dict[str, str]


NOTHING_SENT = Sent({}, {})


@router.get(URL)
async def cost_page(campaign_id: str, page: InWorkspace, conn: Db) -> Response:
    campaign = await get_campaign(conn, page.workspace, campaign_id)
    return await _page(page, conn, campaign)


@router.post(f"{URL}/model")
async def set_model(campaign_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    campaign = await get_campaign(conn, page.workspace, campaign_id)
    form = await read_form(page.request)
    values = _model_values(form)
    try:
        version = models.new_cost_model(
            campaign.id,
            starts_on=_day(values["starts_on"], "starts_on") or _today(page),
            model=_kind(values["model"]),
            currency=page.workspace.currency,
            amount=values["amount"] or None,
            percent=values["percent"] or None,
            counts_bots=bool(values["counts_bots"]),
            event_types=values["event_types"],
            now=datetime.now(UTC),
        )
        await models.set_cost_model(conn, page.workspace, version)
    except InvalidInput as exc:
        model = Sent(values, field_errors(exc))
        return await _page(page, conn, campaign, model=model, status_code=422)
    return redirect(page, _url(page, campaign), "costs.model_saved")


@router.post(f"{URL}/days")
async def enter_day(campaign_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    campaign = await get_campaign(conn, page.workspace, campaign_id)
    form = await read_form(page.request)
    values = {name: form[name].strip() for name in ("day", "cost", "impressions", "source_id")}
    currency = page.workspace.currency
    try:
        entry = days.new_cost_entry(
            _day(values["day"], "day") or _today(page),
            cost=values["cost"] or None,
            impressions=_impressions(values["impressions"]),
            source_id=values["source_id"] or None,
            currency=currency,
        )
        await days.put_cost_days(
            conn, page.workspace, campaign.id, [entry], currency=currency, now=datetime.now(UTC)
        )
    except InvalidInput as exc:
        day = Sent(values, field_errors(exc))
        return await _page(page, conn, campaign, day=day, status_code=422)
    return redirect(page, _url(page, campaign), "costs.day_saved", day=page.t.day(entry.day))


@router.post(f"{URL}/days/delete")
async def forget_day(campaign_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    campaign = await get_campaign(conn, page.workspace, campaign_id)
    form = await read_form(page.request)
    day = _day(form["day"], "day") or _today(page)
    await days.delete_cost_day(
        conn, page.workspace, campaign.id, day, source_id=form["source_id"] or None
    )
    return redirect(page, _url(page, campaign), "costs.day_deleted", day=page.t.day(day))


async def sent_csv(request: Request) -> bytes | None:
    """The CSV file sent, read before the request's transaction begins; None if none was."""
    form = await request.form()
    file = form.get("file")
    if not isinstance(file, UploadFile) or not file.filename:
        return None
    try:
        return await file.read(MAX_BYTES + 1)
    finally:
        await file.close()


@router.post(f"{URL}/import")
@body_limit(MAX_BYTES + 64 * 1024)
async def import_days(
    # Declared first: the file is read before ``conn`` begins its transaction.
    data: Annotated[bytes | None, Depends(sent_csv)],
    campaign_id: str,
    page: InWorkspace,
    conn: Db,
) -> Response:
    page.require(Role.MEMBER)
    campaign = await get_campaign(conn, page.workspace, campaign_id)
    workspace = page.workspace
    sources = await source_keys(conn, workspace)
    await conn.commit()  # reading the file and storing it in chunks hold no transaction
    try:
        if data is None:
            raise InvalidInput({"file": "choose the file to upload"})
        # In a thread: 5000 lines take a CPU's tenth of a second, which clicks must not wait for.
        entries = await run_in_threadpool(
            read_cost_csv, data, currency=workspace.currency, sources=sources
        )
        await days.import_cost_days(
            runtime_of(page.request).writer,
            workspace,
            campaign.id,
            entries,
            currency=workspace.currency,
            now=datetime.now(UTC),
        )
    except InvalidInput as exc:
        sent = Sent({}, field_errors(exc))
        async with runtime_of(page.request).read_engine.connect() as read:
            return await _page(page, read, campaign, imported=sent, status_code=422)
    return redirect(page, _url(page, campaign), "costs.imported", count=str(len(entries)))


def _url(page: Page, campaign: Campaign) -> str:
    return f"/w/{page.workspace.id}/campaigns/{campaign.id}/costs"


def _today(page: Page) -> date:
    return datetime.now(ZoneInfo(page.workspace.timezone)).date()


def _day(text: str, field: str) -> date | None:
    if not text.strip():
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidInput({field: "is not a date"}) from None


def _kind(text: str) -> CostModelKind:
    try:
        return CostModelKind(text)
    except ValueError:
        raise InvalidInput({"model": "choose a cost model"}) from None


def _impressions(text: str) -> int | None:
    if not text:
        return None
    digits = text.replace(".", "").replace(",", "").replace(" ", "")
    if not digits.isdigit() or len(digits) > 13:
        raise InvalidInput({"impressions": "must be a whole number"})
    return int(digits)


def _model_values(form: Form) -> dict[str, Any]:
    values: dict[str, Any] = {
        n: form[n].strip() for n in ("model", "starts_on", "amount", "percent")
    }
    values["counts_bots"] = bool(form["counts_bots"])
    values["event_types"] = form.getlist("event_types")[: models.MAX_EVENT_TYPES]
    return values


async def _page(
    page: Page,
    conn: AsyncConnection,
    campaign: Campaign,
    *,
    model: Sent = NOTHING_SENT,
    day: Sent = NOTHING_SENT,
    imported: Sent = NOTHING_SENT,
    status_code: int = 200,
) -> Response:
    workspace, today = page.workspace, _today(page)
    history = await models.cost_history(conn, workspace, campaign.id)
    current = models.model_on(history, today)
    first = today - timedelta(days=LISTED_DAYS - 1)
    entered = await days.list_cost_days(conn, workspace, campaign.id, first=first, last=today)
    sources = await list_sources(conn, workspace)
    context = {
        "section": "campaigns",
        "campaign": campaign,
        "currency": workspace.currency,
        "kinds": [kind.value for kind in CostModelKind],
        "current": current,
        "history": [{"version": v, **_shown(v)} for v in reversed(history)],
        "days": _day_rows(entered, {source.id: source.name for source in sources}),
        "sources": sources,
        "event_types": [e.name for e in await list_event_types(conn, workspace.id)],
        "model_values": _model_form(current, today) | model.values,
        "model_errors": model.errors,
        "day_values": {"day": today.isoformat(), "cost": "", "impressions": "", "source_id": ""}
        | day.values,
        "day_errors": day.errors,
        "import_errors": imported.errors,
    }
    return render(page, "dashboard/campaigns/costs.html", context, status_code=status_code)


def _model_form(current: models.CostModel | None, today: date) -> dict[str, Any]:
    """The model form as it opens: the model in force, from today on."""
    if current is None:
        return {
            "model": "cpc",
            "starts_on": today.isoformat(),
            "amount": "",
            "percent": "",
            "counts_bots": False,
            "event_types": ["SALE"],
        }
    return {
        "model": current.model.value,
        "starts_on": today.isoformat(),
        **_shown(current),
        "counts_bots": current.counts_bots,
        "event_types": list(current.event_types),
    }


def _day_rows(entered: list[days.CostDay], names: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "entry": d.entry,
            "source": names.get(d.entry.source_id or "", ""),
            "cost": "" if d.entry.cost is None else cost_text(d.entry.cost, d.currency),
        }
        for d in entered
    ]


def _shown(version: models.CostModel) -> dict[str, str]:
    if version.model is CostModelKind.REVSHARE:
        return {"amount": "", "percent": str(Decimal(version.rate).scaleb(-2))}
    if version.model in models.PRICED:
        return {"amount": cost_text(version.rate, version.currency), "percent": ""}
    return {"amount": "", "percent": ""}
