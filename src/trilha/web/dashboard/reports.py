"""The home screen and the report builder: levels, filters, period, sortable columns chosen per
member, rows that open into the next level, and the table as CSV for Excel."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Response
from starlette.datastructures import QueryParams

from trilha.campaigns import Campaign, list_campaigns, list_sources
from trilha.errors import InvalidInput
from trilha.first_steps import FirstSteps, first_steps
from trilha.i18n import Translator
from trilha.reports.builder import Report, Row
from trilha.reports.columns import report_columns, save_report_columns
from trilha.reports.dimensions import TIME, Dimension
from trilha.reports.export import shown_report_csv
from trilha.reports.home import Home, home
from trilha.reports.limits import ReportLimiter
from trilha.reports.metrics import METRIC_NAMES, SIGNED, Counts, metrics
from trilha.reports.periods import Preset
from trilha.reports.request import (
    CSV_ROWS,
    DEFAULT_ROWS,
    ReportQuery,
    drill_down,
    query_params,
    read_query,
    run_report,
)
from trilha.reports.shown import format_metric, row_label
from trilha.web.auth import Db, Reports
from trilha.web.dashboard.conversions import workspace_names
from trilha.web.dashboard.pages import InWorkspace, Page, field_errors, local_path, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.zones import zone_choices

router = APIRouter(route_class=DashboardRoute)

# Today against yesterday on the home screen; those the reports have, in this order.
# Today's figures of each campaign in the campaign list.
CAMPAIGN_FIGURES = ("clicks", "sales", "profit")
HOME_FIGURES = ("clicks", "sales", "net_revenue", "cost", "profit")
TOP_FIGURES = ("clicks", "sales", "net_revenue", "profit")
PER_CLICK = frozenset({"cr", "epc", "epuc"})  # rates whose divisor is the clicks
_NAMED = {
    Dimension.CAMPAIGN: "campaign_names",
    Dimension.SOURCE: "source_names",
    Dimension.MERCHANT: "merchant_names",
}


@router.get("/w/{workspace_id}")
async def home_page(page: InWorkspace, conn: Db, reports: Reports) -> Response:
    workspace = page.workspace
    campaigns = await list_campaigns(conn, workspace)
    steps = await first_steps(conn, workspace.id)
    checklist = None if steps.done else _checklist(page, steps, campaigns)
    if not campaigns:  # a new workspace: where to begin, and nothing to count yet
        context = {"section": "home", "first_steps": True, "checklist": checklist}
        return render(page, "dashboard/reports/home.html", context)
    screen: Home = await reports.run(conn, workspace.id, home, workspace, now=datetime.now(UTC))
    context = {
        "section": "home",
        "first_steps": False,
        "checklist": checklist,
        "figures": [
            (name, _figure(page.t, screen.today, name), _figure(page.t, screen.yesterday, name))
            for name in HOME_FIGURES
        ],
        "chart": json.dumps(_chart(screen.days)),
        "top": [
            (
                row,
                _report_url(page, _campaign_today(row)),
                metric_cells(page.t, row.counts, screen.today.currency, TOP_FIGURES),
            )
            for row in screen.top
        ],
        "top_figures": TOP_FIGURES,
        "orphans": (
            metric_cells(page.t, screen.orphans.counts, screen.today.currency, TOP_FIGURES)
            if screen.orphans is not None
            else None
        ),
        "orphans_url": _orphans_url(page),
        "health": screen.health,
    }
    return render(page, "dashboard/reports/home.html", context)


def _checklist(
    page: Page, steps: FirstSteps, campaigns: list[Campaign]
) -> list[tuple[str, bool, str]]:
    """Each first step: its name, whether it is done, and the page that does it (a cost is
    set on a campaign's cost page: the newest campaign's, when there is one)."""
    base = f"/w/{page.workspace.id}"
    costs = f"{base}/campaigns/{campaigns[0].id}/costs" if campaigns else f"{base}/campaigns"
    return [
        ("campaign", steps.campaign, f"{base}/campaigns/new"),
        ("merchant", steps.merchant, f"{base}/merchants/new"),
        ("cost", steps.cost, costs),
        ("destination", steps.destination, f"{base}/destinations"),
    ]


@router.get("/w/{workspace_id}/reports")
async def report_page(page: InWorkspace, conn: Db, reports: Reports) -> Response:
    names = await _names(page, conn)
    params = page.request.query_params
    errors: dict[str, str] = {}
    workspace = page.workspace
    try:
        query = read_query(params.get, lambda name: _many(params, name, names))
        report: Report = await reports.run(
            conn, workspace.id, run_report, workspace, query, now=datetime.now(UTC)
        )
    except InvalidInput as exc:
        errors = field_errors(exc)
        query = ReportQuery()
        report = await reports.run(
            conn, workspace.id, run_report, workspace, query, now=datetime.now(UTC)
        )
    # The period day by day above the table, as on the home screen: same filters and clock.
    days: Report = await reports.run(
        conn, workspace.id, run_report, workspace, _by_day(query), now=datetime.now(UTC)
    )
    columns = await report_columns(conn, page.workspace.id, page.user.id)
    t = page.t
    here = _report_url(page, query)
    orphans = _orphan_row(query, report)
    context: dict[str, Any] = {
        "section": "reports",
        "query": query,
        "report": report,
        "errors": errors,
        "chart": json.dumps(_chart(days)),
        **_level_rows(page, query, report, columns),
        "totals": _total_cells(t, report, orphans, columns),
        "orphan_sales": orphans.counts.sales if orphans is not None else 0,
        "columns": columns,
        "headers": [(name, _sort_url(page, query, name)) for name in columns],
        "metric_names": METRIC_NAMES,
        "levels": [d.value for d in Dimension],
        "presets": [p.value for p in Preset],
        "filters": [
            (
                d.value,
                row_label(t, d, report.names.get(value, value) if d in _NAMED else value),
                _report_url(page, _without(query, d)),
            )
            for d, value in query.filters.items()
        ],
        "filter_dimensions": [d.value for d in Dimension if d not in TIME],
        "filter_params": [value for name, value in query_params(query) if name == "filter"],
        "timezones": zone_choices(page.t.locale, datetime.now(UTC)),
        "timezone": report.selection.period.zone.key,
        "period": report.selection.period,
        "report_url": here,
        "csv_url": f"/w/{page.workspace.id}/reports/csv?{urlencode(query_params(query))}",
    }
    return render(
        page, "dashboard/reports/report.html", context, status_code=422 if errors else 200
    )


def _by_day(query: ReportQuery) -> ReportQuery:
    """The report's period and filters, one row a day."""
    return replace(
        query, group_by=(Dimension.DAY,), parent=(), sort=None, limit=None, offset=0, flat=False
    )


@router.get("/w/{workspace_id}/reports/rows")
async def report_rows(page: InWorkspace, conn: Db, reports: Reports) -> Response:
    """A level's rows under a row the user opened, or the next page of a level: table rows
    to put in place in the report (htmx)."""
    names = await _names(page, conn)
    params = page.request.query_params
    query = read_query(params.get, lambda name: _many(params, name, names))
    workspace = page.workspace
    report = await reports.run(
        conn, workspace.id, run_report, workspace, query, now=datetime.now(UTC)
    )
    columns = await report_columns(conn, page.workspace.id, page.user.id)
    context = {"query": query, **_level_rows(page, query, report, columns)}
    return render(page, "dashboard/reports/rows.html", context)


def _level_rows(
    page: Page, query: ReportQuery, report: Report, columns: tuple[str, ...]
) -> dict[str, Any]:
    """The rows of the report's level as the table shows them: each in its level's column,
    with what opens it (its children in place, or the report it drills into), then the sum of
    the level's other rows, with the next page when there is one."""
    t, currency = page.t, report.currency
    depth = len(report.parent)
    rows = []
    orphans = _orphan_row(query, report)
    for row in report.rows:
        opened = drill_down(query, report, row)
        children = replace(query, parent=row.key, offset=0, limit=DEFAULT_ROWS)
        rows.append(
            {
                "depth": depth,
                "label": row_label(t, query.group_by[depth], row.labels[-1]),
                "cells": metric_cells(t, row.counts, currency, columns),
                "open": _report_url(page, opened) if opened is not None else None,
                "expand": _rows_url(page, children) if depth + 1 < len(query.group_by) else None,
            }
            | (
                {"label": t("reports.orphans"), "attach": _orphans_url(page)}
                if row is orphans
                else {}
            )
        )
    others = None
    if report.after is not None:  # the rows before the page are on the screen already
        shown = query.offset + len(report.rows)
        others = {
            "depth": depth,
            "label": t("reports.others", n=report.row_count - shown),
            "cells": metric_cells(t, report.after, currency, columns),
            "more": _rows_url(page, replace(query, offset=shown)),
        }
    return {"rows": rows, "others": others}


def _orphan_row(query: ReportQuery, report: Report) -> Row | None:
    """The first level's row of conversions that reached no campaign, when the report is by
    campaign: the dashboard names it, and links it to attaching them to their clicks."""
    if report.parent or query.group_by[0] is not Dimension.CAMPAIGN:
        return None
    return next((row for row in report.rows if row.key[0] == ""), None)


def _orphans_url(page: Page) -> str:
    return f"/w/{page.workspace.id}/conversions?orphan=yes"


def _total_cells(
    t: Translator, report: Report, orphans: Row | None, columns: tuple[str, ...]
) -> list[tuple[str, str]]:
    """The totals row: sums over every row, orphan sales included (the note under it says
    so); rates per click over the rows that have clicks, so orphan sales, which have none,
    do not raise them."""
    cells = metric_cells(t, report.totals, report.currency, columns)
    if orphans is None:
        return cells
    clicked = metric_cells(t, report.totals.minus(orphans.counts), report.currency, columns)
    return [
        clicked[i] if name in PER_CLICK else cell
        for i, (name, cell) in enumerate(zip(columns, cells, strict=True))
    ]


def _rows_url(page: Page, query: ReportQuery) -> str:
    return f"/w/{page.workspace.id}/reports/rows?{urlencode(query_params(query))}"


@router.get("/w/{workspace_id}/reports/csv")
async def report_csv_download(page: InWorkspace, conn: Db, reports: Reports) -> Response:
    names = await _names(page, conn)
    params = page.request.query_params
    query = read_query(params.get, lambda name: _many(params, name, names))
    workspace = page.workspace
    every_level = replace(query, flat=True, parent=(), limit=CSV_ROWS, offset=0)
    report = await reports.run(
        conn, workspace.id, run_report, workspace, every_level, now=datetime.now(UTC)
    )
    columns = await report_columns(conn, page.workspace.id, page.user.id)
    return Response(
        shown_report_csv(report, columns, page.t).encode(),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": 'attachment; filename="report.csv"'},
    )


@router.post("/w/{workspace_id}/reports/columns")
async def choose_columns(page: InWorkspace, conn: Db) -> Response:
    form = await read_form(page.request)
    back = local_path(form["next"], f"/w/{page.workspace.id}/reports")
    if not back.startswith(f"/w/{page.workspace.id}/reports"):
        back = f"/w/{page.workspace.id}/reports"
    try:
        await save_report_columns(conn, page.workspace.id, page.user.id, form.getlist("column"))
    except InvalidInput:
        return redirect(page, back, "reports.choose_a_column", kind="error")
    return redirect(page, back, "reports.columns_saved")


async def campaigns_today(
    page: Page, conn: Db, reports: ReportLimiter
) -> dict[str, list[tuple[str, str]]]:
    """Each campaign's CAMPAIGN_FIGURES today (a campaign without clicks or sales: zeros)."""
    query = ReportQuery(preset=Preset.TODAY, limit=None)  # every campaign the list shows
    workspace = page.workspace
    report = await reports.run(
        conn, workspace.id, run_report, workspace, query, now=datetime.now(UTC)
    )
    today = {row.key[0]: row.counts for row in report.rows}
    return {
        campaign_id: metric_cells(page.t, counts, report.currency, CAMPAIGN_FIGURES)
        for campaign_id, counts in today.items()
    } | {"": metric_cells(page.t, Counts(), report.currency, CAMPAIGN_FIGURES)}


async def _names(page: Page, conn: Db) -> dict[str, dict[str, str]]:
    sources = await list_sources(conn, page.workspace)
    return {**await workspace_names(page, conn), "source_names": {s.id: s.name for s in sources}}


def _many(params: QueryParams, name: str, names: dict[str, dict[str, str]]) -> list[str]:
    """Repeated parameters; the builder's "add a filter" pair (a dimension, a value typed as
    the user sees it: a campaign's, source's or merchant's name) joins the filters."""
    values = params.getlist(name)
    if name != "filter":
        return values
    dimension, value = params.get("add_dimension", ""), params.get("add_value", "").strip()
    if not dimension or not value:
        return values
    try:
        named = names.get(_NAMED.get(Dimension(dimension), ""), {})
    except ValueError:
        named = {}  # read_query names the unknown dimension
    by_name = {shown.casefold(): id_ for id_, shown in named.items()}
    return [*values, f"{dimension}:{by_name.get(value.casefold(), value)}"]


def _report_url(page: Page, query: ReportQuery) -> str:
    return f"/w/{page.workspace.id}/reports?{urlencode(query_params(query))}"


def _sort_url(page: Page, query: ReportQuery, metric: str) -> str:
    descending = not (query.sort == metric and query.descending)
    return _report_url(
        page, ReportQuery(**{**_fields(query), "sort": metric, "descending": descending})
    )


def _without(query: ReportQuery, dimension: Dimension) -> ReportQuery:
    filters = {d: v for d, v in query.filters.items() if d is not dimension}
    return ReportQuery(**{**_fields(query), "filters": filters})


def _fields(query: ReportQuery) -> dict[str, Any]:
    return {name: getattr(query, name) for name in ReportQuery.__dataclass_fields__}


def _campaign_today(row: Row) -> ReportQuery:
    return ReportQuery(
        preset=Preset.TODAY, group_by=(Dimension.SOURCE,), filters={Dimension.CAMPAIGN: row.key[0]}
    )


def metric_cells(
    t: Translator, counts: Counts, currency: str, columns: tuple[str, ...]
) -> list[tuple[str, str]]:
    """Each column's text and its CSS class (profit and ROI coloured by sign)."""
    values = metrics(counts, currency)
    return [
        (format_metric(t, name, values[name], currency), _tone(name, values[name]))
        for name in columns
    ]


def _tone(name: str, value: int | Decimal | None) -> str:
    if name not in SIGNED or value is None or value == 0:
        return ""
    return "gain" if value > 0 else "loss"


def _figure(t: Translator, report: Report, name: str) -> str:
    return format_metric(t, name, metrics(report.totals, report.currency)[name], report.currency)


def _chart(days: Report) -> dict[str, Any]:
    """Every day of the period, those without clicks or sales as zeros; the revenue's
    currency."""
    by_day = {row.key[0]: row.counts for row in days.rows}
    period = days.selection.period
    labels, clicks, sales, revenue = [], [], [], []
    day: date = period.first
    while day <= period.last:
        counts = by_day.get(day.isoformat(), Counts())
        values = metrics(counts, days.currency)
        labels.append(day.isoformat())
        clicks.append(counts.clicks)
        sales.append(counts.sales)
        revenue.append(float(values["net_revenue"] or 0))
        day += timedelta(days=1)
    return {
        "days": labels,
        "clicks": clicks,
        "sales": sales,
        "revenue": revenue,
        "currency": days.currency,
    }
