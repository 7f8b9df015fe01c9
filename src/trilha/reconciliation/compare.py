"""A platform's sales against trilha's conversions, by transaction id, within the file's days.
Pure: what the database holds comes in as values (see ``store``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, time, timedelta
from decimal import Decimal
from enum import StrEnum
from zoneinfo import ZoneInfo

from trilha.conversions.outcome import Outcome
from trilha.reconciliation.sales import Sale


class Verdict(StrEnum):
    MATCHED = "matched"
    MISSING_IN_TRILHA = "missing_in_trilha"  # in the platform's file, not in trilha
    MISSING_IN_PLATFORM = "missing_in_platform"  # in trilha, within the file's days, not in it
    VALUE_DIFFERS = "value_differs"
    STATUS_DIFFERS = "status_differs"


class Cause(StrEnum):
    """Why a sale of the file is missing in trilha, from the postback log."""

    NEVER_RECEIVED = "never_received"  # no postback carried its transaction id
    INVALID = "invalid"  # one did, and could not be used: see the reason
    IGNORED = "ignored"  # one did, for an event or change the mapping does not count
    ORPHAN = "orphan"  # one did, for a click trilha does not know
    OTHER = "other"  # one did and was counted, but its conversion is gone


@dataclass(frozen=True, slots=True)
class Recorded:
    """A conversion of trilha, as reconciliation sees it."""

    id: str
    txid: str
    status: str
    value: Decimal
    currency: str
    created_at: datetime
    is_orphan: bool
    merchant_id: str | None


@dataclass(frozen=True, slots=True)
class Evidence:
    """The latest postback log entry about a transaction id."""

    postback_id: str
    outcome: str
    reason: str
    received_at: datetime


@dataclass(frozen=True, slots=True)
class Line:
    verdict: Verdict
    txid: str
    row: int | None = None  # the file's line
    platform_status: str | None = None
    platform_raw_status: str | None = None
    platform_value: Decimal | None = None
    platform_currency: str | None = None
    sold_at: datetime | None = None
    conversion_id: str | None = None
    trilha_status: str | None = None
    trilha_value: Decimal | None = None
    trilha_currency: str | None = None
    recorded_at: datetime | None = None
    is_orphan: bool = False  # recorded, but on no click
    cause: Cause | None = None
    reason: str = ""
    postback_id: str | None = None


@dataclass(frozen=True, slots=True)
class Window:
    start: datetime
    end: datetime  # excluded

    def __contains__(self, moment: datetime) -> bool:
        return self.start <= moment < self.end


def file_window(sales: Sequence[Sale], timezone: str) -> Window | None:
    """The whole days, on the workspace's clock, from the file's first sale to its last."""
    if not sales:
        return None
    zone = ZoneInfo(timezone)
    first = min(s.sold_at for s in sales).astimezone(zone).date()
    last = max(s.sold_at for s in sales).astimezone(zone).date()
    start = datetime.combine(first, time(), zone)
    return Window(start, datetime.combine(last + timedelta(days=1), time(), zone))


def compare(
    sales: Sequence[Sale],
    recorded: Sequence[Recorded],
    evidence: Mapping[str, Evidence],
    *,
    window: Window | None,
    merchant_id: str,
) -> list[Line]:
    """One line per sale of the file, then one per conversion of the merchant recorded within
    the window that the file lacks."""
    by_txid = {r.txid: r for r in recorded}
    lines = [_line(sale, by_txid.get(sale.txid), evidence.get(sale.txid)) for sale in sales]
    in_file = {sale.txid for sale in sales}
    for r in sorted(recorded, key=lambda r: r.created_at):
        if r.txid in in_file or r.merchant_id != merchant_id:
            continue
        if window is not None and r.created_at in window:
            lines.append(_trilha_only(r))
    return lines


def _line(sale: Sale, found: Recorded | None, seen: Evidence | None) -> Line:
    line = Line(
        Verdict.MATCHED,
        sale.txid,
        row=sale.row,
        platform_status=sale.status.value,
        platform_raw_status=sale.raw_status,
        platform_value=sale.value,
        platform_currency=sale.currency,
        sold_at=sale.sold_at,
    )
    if found is None:
        cause, reason, postback = _cause(seen)
        return replace(
            line,
            verdict=Verdict.MISSING_IN_TRILHA,
            cause=cause,
            reason=reason,
            postback_id=postback,
        )
    if found.status != sale.status.value:
        verdict = Verdict.STATUS_DIFFERS
    elif found.value != sale.value or found.currency != sale.currency:
        verdict = Verdict.VALUE_DIFFERS
    else:
        verdict = Verdict.MATCHED
    return _with_trilha(replace(line, verdict=verdict), found)


def _with_trilha(line: Line, found: Recorded) -> Line:
    return replace(
        line,
        conversion_id=found.id,
        trilha_status=found.status,
        trilha_value=found.value,
        trilha_currency=found.currency,
        recorded_at=found.created_at,
        is_orphan=found.is_orphan,
    )


def _trilha_only(found: Recorded) -> Line:
    return _with_trilha(Line(Verdict.MISSING_IN_PLATFORM, found.txid), found)


def _cause(seen: Evidence | None) -> tuple[Cause, str, str | None]:
    if seen is None:
        return Cause.NEVER_RECEIVED, "", None
    causes = {
        Outcome.INVALID.value: Cause.INVALID,
        Outcome.IGNORED.value: Cause.IGNORED,
        Outcome.ORPHAN.value: Cause.ORPHAN,
    }
    return causes.get(seen.outcome, Cause.OTHER), seen.reason, seen.postback_id


def summary(lines: Sequence[Line]) -> dict[str, int]:
    """How many lines of each verdict, every verdict named.

    >>> summary([Line(Verdict.MATCHED, "T1")])["matched"], summary([])["value_differs"]
    (1, 0)
    """
    counts = Counter(line.verdict.value for line in lines)
    return {verdict.value: counts.get(verdict.value, 0) for verdict in Verdict}
