"""What became of a postback: exactly one Outcome, with a reason in words."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    CREATED = "created"  # a new conversion on a known click
    STATUS_CHANGED = "status_changed"  # e.g. pending → approved, approved → refunded
    DUPLICATE = "duplicate"  # already counted; nothing changed
    ORPHAN = "orphan"  # a valid conversion whose click id is unknown (kept, attachable later)
    IGNORED = "ignored"  # valid, but an event the mapping does not count, or an illegal change
    INVALID = "invalid"  # not usable: see the reason

    @property
    def is_accepted(self) -> bool:
        """The platform should not retry: everything but an invalid request."""
        return self is not Outcome.INVALID


class Rejected(Exception):
    """Stops the pipeline with `invalid`; ``http_status`` is what the platform is answered."""

    def __init__(self, reason: str, *, http_status: int = 400) -> None:
        super().__init__(reason)
        self.reason = reason
        self.http_status = http_status


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    reason: str
    http_status: int = 200
    conversion_id: str | None = None
    event_type: str | None = None
    status: str | None = None
    postback_id: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def answer(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": self.outcome.value}
        if self.event_type:
            body["event"] = self.event_type
        if self.conversion_id:
            body["conversion_id"] = self.conversion_id
        if self.status and self.outcome is not Outcome.INVALID:
            body["conversion_status"] = self.status
        if self.reason:
            body["reason"] = self.reason
        if self.postback_id:
            body["postback_id"] = self.postback_id
        return body
