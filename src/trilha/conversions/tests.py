"""Test conversions: those "send test postback" made. They are shown as tests, never counted,
and may be deleted, unlike every other conversion."""

from __future__ import annotations

from sqlalchemy import Connection, delete, select

from trilha.db.schema import conversions
from trilha.errors import Conflict, NotFound


def delete_test_conversion(conn: Connection, workspace_id: str, conversion_id: str) -> None:
    """Delete a test conversion with its status history; its log entries stay."""
    c = conversions.c
    is_test = conn.execute(
        select(c.is_test).where(c.id == conversion_id, c.workspace_id == workspace_id)
    ).scalar_one_or_none()
    if is_test is None:
        raise NotFound("conversion not found")
    if not is_test:
        raise Conflict("only test conversions can be deleted; real sales are kept")
    conn.execute(delete(conversions).where(c.id == conversion_id, c.workspace_id == workspace_id))
