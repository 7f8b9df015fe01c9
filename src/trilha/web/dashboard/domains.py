"""Custom tracking domains: list, add (with a fallback URL), verify through DNS, and remove."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.custom_domains import (
    CheckResult,
    DomainPolicy,
    add_domain,
    delete_domain,
    get_domain,
    list_domains,
    verify_domain,
)
from trilha.errors import Conflict, InvalidInput
from trilha.web.auth import Db, runtime_of
from trilha.web.dashboard.pages import InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)


@router.get("/w/{workspace_id}/domains")
async def domain_list(page: InWorkspace, conn: Db) -> Response:
    return await _page(page, conn, {"host": "", "fallback_url": ""}, {})


@router.post("/w/{workspace_id}/domains")
async def add(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    values = {"host": form["host"], "fallback_url": form["fallback_url"]}
    try:
        domain = await add_domain(
            conn,
            page.workspace,
            host=values["host"],
            fallback_url=values["fallback_url"] or None,
            policy=DomainPolicy.from_settings(page.settings),
            now=datetime.now(UTC),
        )
    except (InvalidInput, Conflict) as exc:
        return await _page(page, conn, values, field_errors(exc), status_code=422)
    return redirect(page, _list_url(page), "domains.added", host=domain.host)


@router.post("/w/{workspace_id}/domains/{domain_id}/verify")
async def verify(domain_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    domain = await get_domain(conn, page.workspace, domain_id)
    await conn.commit()  # the DNS lookup must hold no transaction (on SQLite, the write lock)
    try:
        domain, check = await verify_domain(
            runtime_of(page.request).engine,
            domain,
            policy=DomainPolicy.from_settings(page.settings),
            now=datetime.now(UTC),
        )
    except Conflict as exc:
        reason = page.t.error(exc.message)
        return redirect(page, _list_url(page), "domains.not_verified", kind="error", reason=reason)
    if check.result is CheckResult.VERIFIED:
        return redirect(page, _list_url(page), "domains.verified", host=domain.host)
    reason = page.t.error(check.reason or "")
    return redirect(page, _list_url(page), "domains.not_verified", kind="error", reason=reason)


@router.post("/w/{workspace_id}/domains/{domain_id}/delete")
async def remove(domain_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    domain = await get_domain(conn, page.workspace, domain_id)
    try:
        await delete_domain(conn, page.workspace, domain.id)
    except Conflict as exc:
        return redirect(
            page, _list_url(page), "domains.in_use", kind="error", reason=page.t.error(exc.message)
        )
    return redirect(page, _list_url(page), "domains.removed", host=domain.host)


def _list_url(page: Page) -> str:
    return f"/w/{page.workspace.id}/domains"


async def _page(
    page: Page,
    conn: AsyncConnection,
    values: dict[str, str],
    errors: dict[str, str],
    *,
    status_code: int = 200,
) -> Response:
    context = {
        "section": "domains",
        "domains": await list_domains(conn, page.workspace),
        "values": values,
        "errors": errors,
        "cname_target": urlsplit(page.settings.base_url).hostname or "",
        "needs_proof": page.settings.domain_verification,
    }
    return render(page, "dashboard/domains/list.html", context, status_code=status_code)
