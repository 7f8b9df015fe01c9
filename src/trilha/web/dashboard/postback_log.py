"""Postbacks S2S: every postback received, newest first, with its outcome and reason; one
entry's exact stored request; and replaying invalid or orphan entries after a fix."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import QueryParams

from trilha.conversions.outcome import Outcome
from trilha.errors import InvalidInput, NotFound
from trilha.postbacks.log import LogFilter, get_log_entry, list_log
from trilha.postbacks.replay import replay_postbacks, replay_refusal
from trilha.postbacks.result import Result
from trilha.validation import is_text
from trilha.web.auth import Db
from trilha.web.dashboard.conversions import workspace_names
from trilha.web.dashboard.pages import InWorkspace, Page, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

PAGE_SIZE = 50
FILTERS = ("outcome", "merchant_id", "campaign_id", "click_id", "txid", "since", "until")


@router.get("/w/{workspace_id}/postbacks")
async def log_page(page: InWorkspace, conn: Db) -> Response:
    filters = {name: page.request.query_params.get(name, "").strip() for name in FILTERS}
    where = log_filter(page.request.query_params, page.workspace.timezone)
    entries = await list_log(conn, page.workspace.id, where, limit=PAGE_SIZE + 1)
    return await _render_log(page, conn, filters, entries)


@router.post("/w/{workspace_id}/postbacks/replay")
async def replay(page: InWorkspace, conn: Db) -> Response:
    """Answer with the log page and each replay's result (the new entries are on it too)."""
    page.require(Role.MEMBER)
    ids = (await read_form(page.request)).getlist("ids")
    try:
        results = await replay_postbacks(conn, page.workspace.id, ids, now=datetime.now(UTC))
    except InvalidInput as exc:
        reason = "; ".join(page.t.error(message) for message in exc.fields.values())
        url = f"/w/{page.workspace.id}/postbacks"
        return redirect(page, url, "postbacks.replay_refused", kind="error", reason=reason)
    entries = await list_log(conn, page.workspace.id, LogFilter(), limit=PAGE_SIZE + 1)
    replayed = [_replayed(entry_id, result) for entry_id, result in zip(ids, results, strict=True)]
    return await _render_log(page, conn, dict.fromkeys(FILTERS, ""), entries, replayed)


@router.get("/w/{workspace_id}/postbacks/{entry_id}")
async def log_entry(entry_id: str, page: InWorkspace, conn: Db) -> Response:
    entry = await get_log_entry(conn, page.workspace.id, entry_id)
    if entry is None:
        raise NotFound("postback log entry not found")
    context = {
        "section": "postbacks",
        "entry": entry,
        "request_text": request_text(entry),
        "is_replayable": replay_refusal(entry) is None,
        **await workspace_names(page, conn),
    }
    return render(page, "dashboard/postbacks/detail.html", context)


def log_filter(params: QueryParams, timezone: str) -> LogFilter:
    """The list's filters from the query string; days are whole days on the workspace's clock."""
    values = {name: params.get(name, "").strip() or None for name in FILTERS}
    return LogFilter(
        outcome=values["outcome"],
        merchant_id=values["merchant_id"],
        campaign_id=values["campaign_id"],
        click_id=values["click_id"],
        txid=values["txid"],
        since=_day_start(values["since"], timezone),
        until=_day_start(values["until"], timezone, days=1),
        before_id=params.get("before") or None,
    )


def _day_start(text: str | None, timezone: str, *, days: int = 0) -> datetime | None:
    """Midnight starting the day (plus ``days``) in the workspace's time zone; None if no date,
    or if that midnight lies outside the calendar in UTC (9999-12-31 has no next day, and
    0001-01-01 in Tokyo starts in year 0 in UTC): such a bound leaves nothing out."""
    try:
        day = date.fromisoformat(text or "")
        start = datetime.combine(day + timedelta(days=days), time(), ZoneInfo(timezone))
        start.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    return start


def request_text(entry: dict[str, Any]) -> str:
    """The stored request as HTTP would show it; a JSON body is pretty-printed."""
    target = entry["path"] + (f"?{entry['query']}" if entry["query"] else "")
    lines = [
        f"{entry['method']} {target}",
        *(f"{name}: {value}" for name, value in entry["headers"]),
    ]
    return "\n".join([*lines, "", pretty_body(entry["body"])])


def pretty_body(body: str) -> str:
    """A JSON body indented; as stored when it is no JSON, or when its escapes decode to no
    text (a lone surrogate, which the page could not be encoded with)."""
    try:
        value = json.loads(body)
    except ValueError:
        return body
    return json.dumps(value, indent=2, ensure_ascii=False) if is_text(value) else body


def _replayed(entry_id: str, result: Result) -> dict[str, Any]:
    return {
        "original_id": entry_id,
        "outcome": result.outcome.value,
        "reason": result.reason,
        "entry_id": result.postback_id,
        "conversion_id": result.conversion_id,
    }


async def _render_log(
    page: Page,
    conn: AsyncConnection,
    filters: dict[str, str],
    entries: list[dict[str, Any]],
    replayed: list[dict[str, Any]] | None = None,
) -> Response:
    shown = entries[:PAGE_SIZE]
    older = None
    if len(entries) > PAGE_SIZE:
        query = {name: value for name, value in filters.items() if value}
        older = f"?{urlencode({**query, 'before': shown[-1]['id']})}"
    context = {
        "section": "postbacks",
        "entries": shown,
        "replayable": {e["id"] for e in shown if replay_refusal(e) is None},
        "filters": filters,
        "is_filtered": any(filters.values()) or "before" in page.request.query_params,
        "outcomes": [outcome.value for outcome in Outcome],
        "older_url": older,
        "replayed": replayed,
        **await workspace_names(page, conn),
    }
    return render(page, "dashboard/postbacks/list.html", context)
