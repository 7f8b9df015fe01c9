"""A delivery destination as stored: what the worker, the jobs and the answers read of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row

from trilha.conversions.status import Status
from trilha.deliveries.kinds import GOOGLE_ADS_SECRETS, DestinationStatus, Kind, Method


@dataclass(frozen=True, slots=True)
class Destination:
    id: str
    workspace_id: str
    name: str
    kind: Kind
    url: str
    method: Method
    event_types: tuple[str, ...]
    statuses: tuple[Status, ...]
    campaign_id: str | None
    source_id: str | None
    sub_id: str | None
    secret: str | None = field(repr=False)
    config: dict[str, Any]
    status: DestinationStatus
    status_reason: str
    consecutive_failures: int
    created_at: datetime
    updated_at: datetime
    currency: str | None = None  # values sent in it; None: each conversion's own
    paused_until: datetime | None = None  # its requests went unanswered: waiting until then

    @property
    def masked_secret(self) -> str | None:
        """The secret as answers show it: its last four characters at most.

        >>> masked("whsec_abcdefghijklmnop")
        '••••mnop'
        """
        return None if self.secret is None else masked(self.secret)

    @property
    def masked_config(self) -> dict[str, Any]:
        """The config as answers show it: credentials in it masked."""
        return {
            name: masked(str(value)) if name in SECRET_CONFIG and value else value
            for name, value in self.config.items()
        }


SECRET_CONFIG = GOOGLE_ADS_SECRETS | {"previous_secret"}  # config keys masked in answers


def masked(secret: str) -> str:
    return "••••" + (secret[-4:] if len(secret) >= 16 else "")


def destination_of(row: Row[Any]) -> Destination:
    return Destination(
        id=row.id,
        workspace_id=row.workspace_id,
        name=row.name,
        kind=Kind(row.kind),
        url=row.url,
        method=Method(row.method),
        event_types=tuple(row.event_types),
        statuses=tuple(Status(s) for s in row.statuses),
        campaign_id=row.campaign_id,
        source_id=row.source_id,
        sub_id=row.sub_id,
        secret=row.secret,
        config=dict(row.config),
        status=DestinationStatus(row.status),
        status_reason=row.status_reason,
        consecutive_failures=row.consecutive_failures,
        created_at=row.created_at,
        updated_at=row.updated_at,
        currency=row.currency,
        paused_until=row.paused_until,
    )
