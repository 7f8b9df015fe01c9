"""/workspaces/{id}/campaigns/{id}/costs: a campaign's cost model (with its history) and its
costs and impressions per day, entered one by one or imported from CSV."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Annotated
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, File, Query, Request, Response, UploadFile
from starlette.concurrency import run_in_threadpool

from trilha.campaigns import get_campaign, source_keys
from trilha.costs import days, models
from trilha.costs.imports import MAX_BYTES, read_cost_csv
from trilha.web.api.cost_schemas import (
    CostDayIn,
    CostDayOut,
    CostDaysOut,
    CostModelIn,
    CostModelOut,
    CostModelsOut,
)
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND
from trilha.web.auth import Db, runtime_of
from trilha.web.limits import body_limit
from trilha.workspaces import Role, Workspace

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/campaigns/{campaign_id}/costs",
    tags=["costs"],
    responses=AUTH_ERRORS | NOT_FOUND,
)
SourceQuery = Annotated[
    str | None, Query(max_length=32, description="A traffic source's entry; none: the campaign's")
]


def _today(workspace: Workspace) -> date:
    return datetime.now(ZoneInfo(workspace.timezone)).date()


async def cost_campaign(campaign_id: str, membership: InWorkspace, conn: Db) -> str:
    """The campaign's id once it is found in the workspace: resolved before the path's day and
    the body are read, so a campaign of another workspace answers 404 whatever they hold."""
    return (await get_campaign(conn, membership.workspace, campaign_id)).id


CampaignId = Annotated[str, Depends(cost_campaign)]


async def _models(conn: Db, workspace: Workspace, campaign_id: str) -> CostModelsOut:
    history = await models.cost_history(conn, workspace, campaign_id)
    current = models.model_on(history, _today(workspace))
    return CostModelsOut(
        current=CostModelOut.of(current) if current else None,
        history=[CostModelOut.of(version) for version in history],
    )


@router.get("/model", summary="The campaign's cost model in force, and its history")
async def get_cost_model(
    campaign_id: CampaignId, membership: InWorkspace, conn: Db
) -> CostModelsOut:
    return await _models(conn, membership.workspace, campaign_id)


@router.put(
    "/model",
    summary="Set the campaign's cost model from a day on (days before it keep theirs)",
)
async def put_cost_model(
    campaign_id: CampaignId, body: CostModelIn, membership: InWorkspace, conn: Db
) -> CostModelsOut:
    membership.require(Role.MEMBER)
    workspace = membership.workspace
    version = models.new_cost_model(
        campaign_id,
        starts_on=body.starts_on or _today(workspace),
        model=body.model,
        currency=body.currency or workspace.currency,
        amount=body.amount,
        percent=body.percent,
        counts_bots=body.counts_bots,
        event_types=body.event_types,
        now=datetime.now(UTC),
    )
    await models.set_cost_model(conn, workspace, version)
    return await _models(conn, workspace, campaign_id)


@router.get("/days", summary="Costs and impressions entered per day, newest first")
async def list_cost_days(
    campaign_id: CampaignId,
    membership: InWorkspace,
    conn: Db,
    first: Annotated[date | None, Query(description="The first day; 29 days before last")] = None,
    last: Annotated[date | None, Query(description="The last day; today (the workspace's)")] = None,
) -> CostDaysOut:
    last = last or _today(membership.workspace)
    first = first or last - timedelta(days=29)
    found = await days.list_cost_days(
        conn, membership.workspace, campaign_id, first=first, last=last
    )
    return CostDaysOut(days=[CostDayOut.of(stored) for stored in found])


@router.put(
    "/days/{day}",
    summary="Enter a day's cost (it replaces the model's estimate) and/or impressions",
)
async def put_cost_day(
    campaign_id: CampaignId, day: date, body: CostDayIn, membership: InWorkspace, conn: Db
) -> CostDayOut:
    membership.require(Role.MEMBER)
    workspace = membership.workspace
    currency = body.currency or workspace.currency
    entry = days.new_cost_entry(
        day,
        cost=body.cost,
        impressions=body.impressions,
        source_id=body.source_id,
        currency=currency,
    )
    stored = await days.put_cost_days(
        conn, workspace, campaign_id, [entry], currency=currency, now=datetime.now(UTC)
    )
    return CostDayOut.of(stored[0])


@router.delete(
    "/days/{day}",
    status_code=204,
    summary="Forget a day's entry: the model's estimate counts again",
)
async def delete_cost_day(
    campaign_id: CampaignId,
    day: date,
    membership: InWorkspace,
    conn: Db,
    source_id: SourceQuery = None,
) -> None:
    membership.require(Role.MEMBER)
    await days.delete_cost_day(conn, membership.workspace, campaign_id, day, source_id=source_id)


async def cost_file(
    file: Annotated[UploadFile, File(description="CSV, 1 MB, 5000 lines; see docs/costs.md")],
) -> bytes:
    """The file, read before the request's transaction begins."""
    return await file.read(MAX_BYTES + 1)


@router.post(
    "/days/import",
    summary="Import costs and impressions per day from CSV: all lines or none",
    description="Multipart form with `file`: a header line `day;cost;impressions;source` "
    "(or `dia;custo;impressões;fonte`; `,` works too; cost or impressions may be left out, "
    "source is optional), then a line per day. Every bad line is reported at once, by line "
    "number and column, and then nothing is stored. An amount such as `1.234` is read as the "
    "file's other numbers say, or refused: see docs/costs.md.",
    response_model=CostDaysOut,
)
@body_limit(MAX_BYTES + 64 * 1024)
async def import_cost_days(
    # Declared first: the file is read before ``conn`` begins its transaction.
    data: Annotated[bytes, Depends(cost_file)],
    campaign_id: CampaignId,
    membership: InWorkspace,
    conn: Db,
    request: Request,
) -> Response:
    membership.require(Role.MEMBER)
    workspace = membership.workspace
    sources = await source_keys(conn, workspace)
    await conn.commit()  # reading the file and storing it in chunks hold no transaction
    # In a thread: 5000 lines take a CPU's tenth of a second, which clicks must not wait for.
    entries = await run_in_threadpool(
        read_cost_csv, data, currency=workspace.currency, sources=sources
    )
    stored = await days.import_cost_days(
        runtime_of(request).writer,
        workspace,
        campaign_id,
        entries,
        currency=workspace.currency,
        now=datetime.now(UTC),
    )
    # In a thread too: checking and writing 5000 days' answer on the event loop held clicks.
    return Response(await run_in_threadpool(_answer, stored), media_type="application/json")


def _answer(stored: list[days.CostDay]) -> bytes:
    newest_first = sorted(stored, key=_newest_first)
    return CostDaysOut(days=[CostDayOut.of(s) for s in newest_first]).model_dump_json().encode()


def _newest_first(stored: days.CostDay) -> tuple[int, str]:
    return -stored.entry.day.toordinal(), stored.entry.source_id or ""
