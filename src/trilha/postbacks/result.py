"""A postback's result: its Outcome, the reason in words, and the answer the platform gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trilha.conversions.outcome import Outcome


class Rejected(Exception):
    """Stops the pipeline with `invalid`; ``http_status`` is what the platform is answered;
    ``auth_failed``: the request did not prove it comes from the merchant."""

    def __init__(self, reason: str, *, http_status: int = 400, auth_failed: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.http_status = http_status
        self.auth_failed = auth_failed


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    reason: str
    http_status: int = 200
    conversion_id: str | None = None
    event_type: str | None = None
    status: str | None = None
    postback_id: str | None = None
    platform: str | None = None  # the preset the postback was read with, once known
    details: dict[str, Any] = field(default_factory=dict)
    enqueued: int = 0  # deliveries queued for destinations

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
