"""The click a conversion lands on: found by the id the platform sent back."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from trilha.db.driver import fetch_one


@dataclass(frozen=True, slots=True)
class Attribution:
    """The click a conversion lands on, or the raw id of an unknown click (an orphan)."""

    raw_click_id: str
    click_id: str | None
    campaign_id: str | None
    source_id: str | None


_CLICK = """
SELECT clicks.id, clicks.campaign_id, clicks.source_id, campaigns.merchant_id
FROM clicks JOIN campaigns ON campaigns.id = clicks.campaign_id
WHERE clicks.id = :click_id AND campaigns.workspace_id = :workspace_id
"""


def find_click(conn: Connection, workspace_id: str, click_id: str) -> Attribution:
    attribution, _ = find_click_and_merchant(conn, workspace_id, click_id)
    return attribution


def find_click_and_merchant(
    conn: Connection, workspace_id: str, click_id: str
) -> tuple[Attribution, str | None]:
    """The click (or an orphan's attribution) and the merchant of its campaign, if any."""
    row = fetch_one(conn, _CLICK, {"click_id": click_id, "workspace_id": workspace_id})
    if row is None:
        return Attribution(click_id, None, None, None), None
    found, campaign_id, source_id, merchant_id = row
    return Attribution(click_id, found, campaign_id, source_id), merchant_id
