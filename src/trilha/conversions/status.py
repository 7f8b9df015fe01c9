"""A conversion's status, and the changes a later report may make to it."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    APPROVED = "approved"
    PENDING = "pending"
    DECLINED = "declined"
    REFUNDED = "refunded"
    CHARGEBACK = "chargeback"


LEGAL_CHANGES = frozenset(
    {
        (Status.PENDING, Status.APPROVED),
        (Status.PENDING, Status.DECLINED),
        # A recovered payment: a card refused then approved, a charge retried after a decline.
        (Status.DECLINED, Status.APPROVED),
        (Status.APPROVED, Status.REFUNDED),
        (Status.APPROVED, Status.CHARGEBACK),
    }
)
