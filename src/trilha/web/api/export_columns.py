"""/workspaces/{id}/merchants/{id}/export-columns: the columns of a merchant's sales export that
reconciliation reads, as remembered from its last upload, or set here."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter
from pydantic import AfterValidator, BaseModel, Field

from trilha.reconciliation.layouts import Columns, Layout
from trilha.reconciliation.reconcile import choose_export_columns, export_columns
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, Input
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/merchants/{merchant_id}/export-columns",
    tags=["reconciliation"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


def naming_a_column(header: str) -> str:
    """The header stripped, as Columns.of reads it: one of only spaces names no column."""
    if not header.strip():
        raise ValueError("names no column")
    return header.strip()


Header = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(naming_a_column)]


class ColumnsModel(Input):
    txid: Header = Field(description="The header of the transaction id's column.")
    status: Header
    value: Header
    sold_at: Header = Field(description="The header of the sale's date.")
    currency: str = Field("", max_length=200, description='"": the workspace\'s currency.')


class ExportColumnsOut(BaseModel):
    layout: Layout = Field(description="The export layout they came from (`custom`: typed).")
    columns: ColumnsModel | None = Field(
        description="null until a first upload (or a PUT) chose them: the layout's are tried."
    )

    @classmethod
    def of(cls, layout: Layout, columns: Columns | None) -> ExportColumnsOut:
        chosen = ColumnsModel.model_validate(columns.as_dict()) if columns else None
        return cls(layout=layout, columns=chosen)


@router.get("", summary="The export columns remembered for a merchant")
async def get_export_columns(
    merchant_id: str, membership: InWorkspace, conn: Db
) -> ExportColumnsOut:
    layout, columns = await conn.run_sync(export_columns, membership.workspace.id, merchant_id)
    return ExportColumnsOut.of(layout, columns)


@router.put("", summary="Set the export columns of a merchant")
async def set_export_columns(
    merchant_id: str, body: ColumnsModel, membership: InWorkspace, conn: Db
) -> ExportColumnsOut:
    membership.require(Role.MEMBER)
    columns = Columns.of(body.model_dump())
    now = datetime.now(UTC)
    await conn.run_sync(
        choose_export_columns, membership.workspace.id, merchant_id, columns, now=now
    )
    return ExportColumnsOut.of(Layout.CUSTOM, columns)
