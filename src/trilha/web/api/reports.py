"""/workspaces/{id}/reports: clicks, sales, revenue and rates by up to three levels, as JSON or
CSV."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response
from pydantic import BaseModel, Field

from trilha.errors import InvalidInput
from trilha.reports.columns import report_columns, save_report_columns
from trilha.reports.dimensions import Dimension
from trilha.reports.export import report_csv
from trilha.reports.metrics import METRIC_NAMES
from trilha.reports.periods import Preset
from trilha.reports.request import (
    CSV_ROWS,
    DEFAULT_ROWS,
    MAX_FILTERS,
    MAX_OFFSET,
    MAX_ROWS,
    ReportQuery,
    parse_filter,
    run_report,
)
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.report_schemas import ReportOut
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, REPORT_LIMITS, Input
from trilha.web.auth import ApiUser, Db, Reports

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/reports",
    tags=["reports"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


def report_query(
    preset: Preset = Preset.LAST_7_DAYS,
    first: Annotated[date | None, Query(description="custom: the first local day")] = None,
    last: Annotated[date | None, Query(description="custom: the last local day")] = None,
    timezone: Annotated[
        str | None, Query(max_length=64, description="IANA zone; the workspace's if left out")
    ] = None,
    group_by: Annotated[
        list[Dimension] | None, Query(max_length=3, description="Up to three levels, in order")
    ] = None,
    filter: Annotated[
        list[str] | None,
        Query(
            max_length=MAX_FILTERS,
            description="`dimension:value`, e.g. `campaign:abc` (an empty value: rows without)",
        ),
    ] = None,
    attribution: Annotated[
        str, Query(pattern="^(conversion_time|click_time)$", description="Which time counts")
    ] = "conversion_time",
    sort: Annotated[
        str | None,
        Query(max_length=40, description="A metric; none: by clicks (a time level: in order)"),
    ] = None,
    order: Annotated[str, Query(pattern="^(asc|desc)$")] = "desc",
    parent: Annotated[
        list[str] | None,
        Query(
            max_length=2,
            description="The values of the levels above the one asked, in order: the rows of "
            "the next level under them (a row's `key` opens it). None: the first level.",
        ),
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=MAX_ROWS, description="Rows on the page, the top ones by the sort")
    ] = DEFAULT_ROWS,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Rows skipped first")] = 0,
) -> ReportQuery:
    return ReportQuery(
        preset=preset,
        first=first,
        last=last,
        timezone=timezone,
        group_by=tuple(group_by if group_by is not None else [Dimension.CAMPAIGN]),
        filters=dict(parse_filter(text) for text in filter or []),
        by_click_time=attribution == "click_time",
        sort=sort,
        descending=order == "desc",
        parent=tuple(parent or ()),
        limit=limit,
        offset=offset,
    )


Asked = Annotated[ReportQuery, Depends(report_query)]


@router.get(
    "",
    summary="A report: one level's rows, a page at a time, with the level's row count, the "
    "sum of the rows left out, and the totals",
    responses=REPORT_LIMITS,
)
async def get_report(
    membership: InWorkspace, conn: Db, reports: Reports, query: Asked
) -> ReportOut:
    workspace = membership.workspace
    report = await reports.run(
        conn, workspace.id, run_report, workspace, query, now=datetime.now(UTC)
    )
    return ReportOut.of(report)


@router.get(
    "/csv",
    summary="A report as CSV for Excel in pt-BR (`;`, decimal comma, UTF-8 with BOM): every "
    "level at once, its top 100,000 rows by the sort, then a row with the sum of the rest",
    response_class=Response,
    responses={**REPORT_LIMITS, 200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
)
async def export_report(
    membership: InWorkspace,
    conn: Db,
    reports: Reports,
    query: Asked,
    column: Annotated[
        list[str] | None, Query(max_length=len(METRIC_NAMES), description="Metrics, in order")
    ] = None,
) -> Response:
    columns = column or list(METRIC_NAMES)
    if any(name not in METRIC_NAMES for name in columns):
        raise InvalidInput({"column": "not a metric"})
    workspace = membership.workspace
    every_level = replace(query, flat=True, parent=(), limit=CSV_ROWS, offset=0)
    report = await reports.run(
        conn, workspace.id, run_report, workspace, every_level, now=datetime.now(UTC)
    )
    return Response(
        report_csv(report, columns).encode(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="report.csv"'},
    )


class ReportColumnsIn(Input):
    columns: list[str] = Field(
        min_length=1,
        max_length=len(METRIC_NAMES),
        description="Metric names, in the order the dashboard shows them",
    )


class ReportColumnsOut(BaseModel):
    columns: list[str] = Field(description="The metrics the dashboard's reports show")
    available: list[str] = Field(description="Every metric a report has")


@router.get("/columns", summary="The metrics you show in the dashboard's reports")
async def get_report_columns(membership: InWorkspace, user: ApiUser, conn: Db) -> ReportColumnsOut:
    columns = await report_columns(conn, membership.workspace.id, user.id)
    return ReportColumnsOut(columns=list(columns), available=list(METRIC_NAMES))


@router.put(
    "/columns",
    summary="Choose the metrics you show in the dashboard's reports (and its CSV export)",
)
async def set_report_columns(
    body: ReportColumnsIn, membership: InWorkspace, user: ApiUser, conn: Db
) -> ReportColumnsOut:
    columns = await save_report_columns(conn, membership.workspace.id, user.id, body.columns)
    return ReportColumnsOut(columns=list(columns), available=list(METRIC_NAMES))
