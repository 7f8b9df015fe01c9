"""One reconciliation, from an uploaded export to the stored comparison, in one transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection

from trilha.reconciliation.compare import compare, file_window, summary
from trilha.reconciliation.layouts import REQUIRED, Columns, Layout, guess_columns, layout_for
from trilha.reconciliation.sales import MAX_BAD_ROWS_SHOWN, check_columns, read_sales
from trilha.reconciliation.store import (
    StoredColumns,
    merchant_preset,
    postback_evidence,
    recorded_conversions,
    remember_columns,
    save_reconciliation,
    stored_columns,
)
from trilha.reconciliation.table import FileError, Table, read_table
from trilha.workspaces import Workspace


@dataclass(frozen=True, slots=True)
class Upload:
    filename: str
    table: Table
    columns: Columns | None = None  # chosen by hand; None: remembered, else the preset's


def choose_columns(
    table: Table, chosen: Columns | None, stored: StoredColumns | None, preset: str
) -> StoredColumns:
    """The columns chosen now (all required ones named), else those remembered for the
    merchant, else those its platform's layout finds in the file's header (or any layout's
    that finds them all, for a merchant on the generic preset)."""
    if chosen is not None and all(getattr(chosen, name) for name in REQUIRED):
        return StoredColumns(stored.layout if stored else layout_for(preset), chosen)
    if stored is not None:
        return stored
    layout = layout_for(preset)
    guessed = guess_columns(table.header, layout)
    if not all(name in guessed for name in REQUIRED):
        for other in Layout:
            found = guess_columns(table.header, other)
            if all(name in found for name in REQUIRED):
                layout, guessed = other, found
                break
    return StoredColumns(layout, Columns.of(guessed))


def reconcile(
    conn: Connection, workspace: Workspace, merchant_id: str, upload: Upload, *, now: datetime
) -> str:
    """Compare the upload with the conversions, remember its columns for the merchant, keep
    the result; its id. FileError when the file's columns or rows cannot be read."""
    preset = merchant_preset(conn, workspace.id, merchant_id)
    chosen = choose_columns(upload.table, upload.columns, stored_columns(conn, merchant_id), preset)
    check_columns(upload.table, chosen.columns)
    read = read_sales(
        upload.table, chosen.columns, timezone=workspace.timezone, currency=workspace.currency
    )
    if not read.sales:
        first = "; ".join(f"row {bad.row}: {bad.reason}" for bad in read.bad_rows[:3])
        raise FileError(f"no row could be read as a sale: {first.replace(chr(39), '')!r}")
    window = file_window(read.sales, workspace.timezone)
    txids = [sale.txid for sale in read.sales]
    recorded = recorded_conversions(conn, workspace.id, merchant_id, txids, window)
    known = {r.txid for r in recorded}
    unknown = [txid for txid in txids if txid not in known]
    evidence = postback_evidence(conn, workspace.id, unknown, window) if window else {}
    lines = compare(read.sales, recorded, evidence, window=window, merchant_id=merchant_id)
    remember_columns(conn, workspace.id, merchant_id, chosen, now=now)
    return save_reconciliation(
        conn,
        workspace.id,
        merchant_id,
        filename=upload.filename,
        window=window,
        counts={**summary(lines), "unreadable_rows": len(read.bad_rows)},
        bad_rows=[{"row": b.row, "reason": b.reason} for b in read.bad_rows[:MAX_BAD_ROWS_SHOWN]],
        lines=lines,
        now=now,
    )


def read_upload(filename: str, data: bytes, columns: dict[str, str] | None = None) -> Upload:
    """The uploaded file read (FileError when it cannot be), with the columns chosen in the
    form, if any were; done before a transaction is taken."""
    chosen = Columns.of(columns) if columns and any(columns.values()) else None
    return Upload(filename.strip()[:200] or "upload", read_table(data), chosen)


def export_columns(
    conn: Connection, workspace_id: str, merchant_id: str
) -> tuple[Layout, Columns | None]:
    """The layout and columns remembered for the merchant; (its platform's layout, None) when
    none were chosen yet. NotFound for another workspace's merchant."""
    preset = merchant_preset(conn, workspace_id, merchant_id)
    stored = stored_columns(conn, merchant_id)
    if stored is None:
        return layout_for(preset), None
    return stored.layout, stored.columns


def choose_export_columns(
    conn: Connection, workspace_id: str, merchant_id: str, columns: Columns, *, now: datetime
) -> None:
    """Remember columns typed by hand for the merchant's next uploads."""
    merchant_preset(conn, workspace_id, merchant_id)
    remember_columns(
        conn, workspace_id, merchant_id, StoredColumns(Layout.CUSTOM, columns), now=now
    )
