"""Reconciliation: upload a platform's sales export, see how it compares with the conversions,
download the result for Excel."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.datastructures import UploadFile

from trilha.merchants import list_merchants
from trilha.reconciliation import store
from trilha.reconciliation.compare import Verdict
from trilha.reconciliation.export import to_csv
from trilha.reconciliation.reconcile import Upload, read_upload, reconcile
from trilha.reconciliation.table import MAX_UPLOAD_BYTES, FileError
from trilha.web.auth import Db
from trilha.web.dashboard.pages import InWorkspace, Page, submitted_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.web.downloads import csv_download
from trilha.web.limits import body_limit
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)
COLUMN_FIELDS = tuple(
    f"{name}_column" for name in ("txid", "status", "value", "sold_at", "currency")
)


@dataclass(frozen=True, slots=True)
class SentFile:
    """The upload form as sent: its values, and the file read, or why it could not be."""

    values: dict[str, str]
    upload: Upload | None
    error: FileError | None


async def sent_file(request: Request) -> SentFile:
    form = await submitted_form(request)
    values = {
        name: str(form.get(name) or "").strip()[:200] for name in ("merchant_id", *COLUMN_FIELDS)
    }
    file = form.get("file")
    if not isinstance(file, UploadFile):
        return SentFile(values, None, FileError("choose the file to upload"))
    try:
        data = await file.read()
    finally:
        await file.close()
    if not file.filename:
        return SentFile(values, None, FileError("choose the file to upload"))
    columns = {name.removesuffix("_column"): values[name] for name in COLUMN_FIELDS}
    try:
        return SentFile(values, read_upload(file.filename, data, columns), None)
    except FileError as exc:
        return SentFile(values, None, exc)


@router.get("/w/{workspace_id}/reconciliation")
async def reconciliation_page(page: InWorkspace, conn: Db) -> Response:
    return await _page(page, conn, {}, {})


@router.post("/w/{workspace_id}/reconciliation")
@body_limit(MAX_UPLOAD_BYTES)
async def upload(
    # Declared first: the file is read and checked before ``conn`` begins its transaction.
    sent: Annotated[SentFile, Depends(sent_file)],
    page: InWorkspace,
    conn: Db,
) -> Response:
    page.require(Role.MEMBER)
    workspace = page.workspace
    try:
        if sent.error is not None:
            raise sent.error
        assert sent.upload is not None  # noqa: S101 -- sent_file gives one or the other
        reconciliation_id = await conn.run_sync(
            reconcile, workspace, sent.values["merchant_id"], sent.upload, now=datetime.now(UTC)
        )
    except FileError as exc:
        return await _page(page, conn, sent.values, exc.fields, status_code=422)
    url = f"/w/{workspace.id}/reconciliation/{reconciliation_id}"
    return redirect(page, url, "reconciliation.done")


@router.get("/w/{workspace_id}/reconciliation/{reconciliation_id}")
async def result_page(
    reconciliation_id: str, page: InWorkspace, conn: Db, verdict: str = ""
) -> Response:
    found = await store.get_reconciliation(conn, page.workspace.id, reconciliation_id)
    shown = [line for line in found.lines if not verdict or line.verdict == verdict]
    context = {
        "section": "reconciliation",
        "run": found,
        "lines": shown,
        "verdict": verdict if verdict in set(Verdict) else "",
        "verdicts": [v.value for v in Verdict],
        **await _merchant_names(page, conn),
    }
    return render(page, "dashboard/reconciliation/result.html", context)


@router.get("/w/{workspace_id}/reconciliation/{reconciliation_id}/csv")
async def download(reconciliation_id: str, page: InWorkspace, conn: Db) -> Response:
    found = await store.get_reconciliation(conn, page.workspace.id, reconciliation_id)
    body = to_csv(found.lines, timezone=page.workspace.timezone, label=page.t)
    return csv_download(body, f"reconciliation-{found.id}.csv")


async def _merchant_names(page: Page, conn: AsyncConnection) -> dict[str, Any]:
    merchants = await list_merchants(conn, page.workspace.id)
    return {"merchants": merchants, "merchant_names": {m.id: m.name for m in merchants}}


async def _page(
    page: Page,
    conn: AsyncConnection,
    values: dict[str, str],
    errors: dict[str, str],
    *,
    status_code: int = 200,
) -> Response:
    context = {
        "section": "reconciliation",
        "values": {name: values.get(name, "") for name in ("merchant_id", *COLUMN_FIELDS)},
        "errors": errors,
        "column_names": [name.removesuffix("_column") for name in COLUMN_FIELDS],
        "remembered": await store.remembered_columns(conn, page.workspace.id),
        "runs": await store.list_reconciliations(conn, page.workspace.id),
        **await _merchant_names(page, conn),
    }
    return render(page, "dashboard/reconciliation/page.html", context, status_code=status_code)
