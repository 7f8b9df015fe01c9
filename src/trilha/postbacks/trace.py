"""What the pipeline learned about a postback on its way, for its log entry."""

from __future__ import annotations

from dataclasses import dataclass, field

from trilha.postbacks.mapping import Fields


@dataclass
class Trace:
    """What the pipeline learned on its way, for the log entry (even when it stops early)."""

    postback_id: str
    workspace_id: str | None = None
    currency: str | None = None  # the workspace's, for amounts sent without one
    merchant_id: str | None = None
    platform: str | None = None  # the merchant's preset, once it is known
    secrets: list[str] = field(default_factory=list)
    secret_headers: set[str] = field(default_factory=set)  # stored masked whole
    auth_failed: bool = False
    fields: Fields | None = None
    read: dict[str, str] = field(default_factory=dict)  # as sent, when the mapping failed
    click_id: str | None = None
    campaign_id: str | None = None
    keeps_buyer_data: bool = False  # the workspace's choice; off: masked in the log
    buyer_values: list[str] = field(default_factory=list)  # masked wherever they appear
