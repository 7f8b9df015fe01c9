"""A claimed delivery with everything its request is built from, and the request itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from trilha.conversions.status import Status
from trilha.links import Link
from trilha.money import from_minor

if TYPE_CHECKING:  # destinations check Meta's config, whose builder takes a Job
    from trilha.deliveries.destination import Destination


@dataclass(frozen=True, slots=True)
class Job:
    delivery_id: str
    attempts: int  # made before this one
    lease_until: datetime | None  # this worker's claim; None for a test send
    created_at: datetime  # when the conversion's change was recorded
    conversion_status: Status  # the change this delivery tells of
    destination: Destination
    conversion: Mapping[str, Any]  # the conversions row
    click: Mapping[str, Any] | None  # the clicks row, when the conversion has one
    link: Link | None  # its campaign, source and workspace time zone
    # The value and currency to send, when the destination wants another currency than the
    # conversion's and a rate was known (trilha.deliveries.claims.sent_value); else its own.
    sent: tuple[Decimal, str] | None = None

    @property
    def value(self) -> Decimal:
        if self.sent is not None:
            return self.sent[0]
        return from_minor(self.conversion["value_minor"], self.conversion["currency"])

    @property
    def currency(self) -> str:
        return self.sent[1] if self.sent is not None else str(self.conversion["currency"])


@dataclass(frozen=True, slots=True)
class OutboundRequest:
    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)  # masked wherever it is shown

    def described(self, limit: int = 2000) -> str:
        """The request line (and body) as the attempt log keeps it, secrets masked.

        >>> OutboundRequest("POST", "https://x.test/?t=abc", body=b'{"k":"abc"}',
        ...                 secrets=("abc",)).described()
        'POST https://x.test/?t=•••• {"k":"••••"}'
        """
        text = f"{self.method} {self.url}"
        if self.body:
            text += " " + self.body[:limit].decode("utf-8", "replace")
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret:
                text = text.replace(secret, "••••")
        return text[:limit]


@dataclass(frozen=True, slots=True)
class Skip:
    """A delivery that will never be sent, and why."""

    reason: str
