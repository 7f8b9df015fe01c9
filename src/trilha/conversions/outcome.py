"""What became of a reported sale: exactly one Outcome, with a reason in words."""

from __future__ import annotations

from enum import StrEnum


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
