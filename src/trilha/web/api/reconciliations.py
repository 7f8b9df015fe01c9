"""/workspaces/{id}/reconciliations: upload a platform's sales export, compare it with the
conversions, and read or download the result."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Response, UploadFile
from pydantic import BaseModel, Field

from trilha.i18n import translator
from trilha.reconciliation import store
from trilha.reconciliation.compare import Cause, Line, Verdict
from trilha.reconciliation.export import to_csv
from trilha.reconciliation.reconcile import Upload, read_upload, reconcile
from trilha.reconciliation.table import MAX_UPLOAD_BYTES
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, Answer, UtcDatetime
from trilha.web.auth import ApiUser, Db
from trilha.web.downloads import csv_download
from trilha.web.limits import body_limit
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/reconciliations",
    tags=["reconciliation"],
    responses=AUTH_ERRORS | NOT_FOUND,
)
ColumnName = Annotated[str, Form(max_length=200)]


class LineOut(Answer):
    verdict: Verdict
    txid: str
    row: int | None = Field(description="The file's line (the header is line 1).")
    platform_status: str | None
    platform_raw_status: str | None = Field(description="The status as the file wrote it.")
    platform_value: Decimal | None
    platform_currency: str | None
    sold_at: UtcDatetime | None
    conversion_id: str | None
    trilha_status: str | None
    trilha_value: Decimal | None
    trilha_currency: str | None
    recorded_at: UtcDatetime | None
    is_orphan: bool = Field(description="Recorded by trilha, but on no click.")
    cause: Cause | None = Field(
        description="Why a sale of the file is missing in trilha, from the postback log."
    )
    reason: str = Field(description="The postback log's reason, for an invalid or ignored one.")
    postback_id: str | None = Field(description="The postback log entry behind the cause.")


class ReconciliationOut(Answer):
    id: str
    merchant_id: str | None
    filename: str
    created_at: UtcDatetime
    window_start: UtcDatetime | None = Field(description="The file's first day, from midnight.")
    window_end: UtcDatetime | None = Field(description="The end of the file's last day.")
    counts: dict[str, int] = Field(description="Lines per verdict, and `unreadable_rows`.")
    bad_rows: list[dict[str, int | str]] = Field(
        description='Rows that could not be read, `{"row": 7, "reason": "..."}` (the first 50).'
    )


class ReconciliationDetail(ReconciliationOut):
    lines: list[LineOut]


class ReconciliationList(BaseModel):
    reconciliations: list[ReconciliationOut] = Field(description="Newest first, the last 50.")


async def sales_upload(
    file: Annotated[UploadFile, File(description="The platform's export: CSV or XLSX, 5 MB")],
    txid_column: ColumnName = "",
    status_column: ColumnName = "",
    value_column: ColumnName = "",
    sold_at_column: ColumnName = "",
    currency_column: ColumnName = "",
) -> Upload:
    """The file read before the request's transaction begins (see create_reconciliation)."""
    columns = {
        "txid": txid_column,
        "status": status_column,
        "value": value_column,
        "sold_at": sold_at_column,
        "currency": currency_column,
    }
    return read_upload(file.filename or "", await file.read(), columns)


@router.post(
    "",
    status_code=201,
    summary="Compare a sales export with the conversions",
    description="Multipart form: `merchant_id`, `file` and, the first time (or to change "
    "them), the `*_column` headers to read; they are remembered for the merchant.",
)
@body_limit(MAX_UPLOAD_BYTES)
async def create_reconciliation(
    # Declared first: the file is read and checked before ``conn`` begins its transaction.
    upload: Annotated[Upload, Depends(sales_upload)],
    merchant_id: Annotated[str, Form(max_length=32)],
    membership: InWorkspace,
    conn: Db,
) -> ReconciliationDetail:
    membership.require(Role.MEMBER)
    workspace = membership.workspace
    now = datetime.now(UTC)
    reconciliation_id = await conn.run_sync(reconcile, workspace, merchant_id, upload, now=now)
    found = await store.get_reconciliation(conn, workspace.id, reconciliation_id)
    return _detail(found)


@router.get("", summary="The reconciliations made, newest first")
async def list_reconciliations(membership: InWorkspace, conn: Db) -> ReconciliationList:
    found = await store.list_reconciliations(conn, membership.workspace.id)
    return ReconciliationList(reconciliations=[ReconciliationOut.model_validate(r) for r in found])


@router.get("/{reconciliation_id}", summary="A reconciliation with its lines")
async def get_reconciliation(
    reconciliation_id: str, membership: InWorkspace, conn: Db
) -> ReconciliationDetail:
    return _detail(await store.get_reconciliation(conn, membership.workspace.id, reconciliation_id))


@router.get(
    "/{reconciliation_id}/csv",
    summary="A reconciliation as CSV (`;`, decimal comma, UTF-8 with BOM, for Excel)",
    response_class=Response,
    responses={
        200: {
            "description": "The lines as CSV.",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        }
    },
)
async def download_reconciliation(
    reconciliation_id: str, membership: InWorkspace, user: ApiUser, conn: Db
) -> Response:
    """Headers and verdicts in the caller's language."""
    found = await store.get_reconciliation(conn, membership.workspace.id, reconciliation_id)
    t = translator(user.locale)
    body = to_csv(found.lines, timezone=membership.workspace.timezone, label=t)
    return csv_download(body, f"reconciliation-{found.id}.csv")


def _detail(found: store.Reconciliation) -> ReconciliationDetail:
    lines: list[Line] = found.lines
    return ReconciliationDetail(
        **ReconciliationOut.model_validate(found).model_dump(),
        lines=[LineOut.model_validate(line) for line in lines],
    )
