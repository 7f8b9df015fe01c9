"""When a reported sale repeats one already counted: the merchant's dedupe mode decides."""

from __future__ import annotations

from enum import StrEnum

from trilha.event_types import BuiltinEvent


class DedupeMode(StrEnum):
    TXID = "txid"  # one conversion per transaction id (else per click and event type)
    CLICK = "click"  # one conversion per click and event type
    WINDOW = "window"  # repeats within the merchant's window are one conversion
    ALLOW_REPEATS = "allow_repeats"  # every postback counts, except a repeated transaction id


def dedupe_key(
    mode: DedupeMode, event_type: str, txid: str | None, raw_click_id: str, postback_id: str
) -> str:
    """The UNIQUE key that makes a repeat a duplicate.

    >>> dedupe_key(DedupeMode.TXID, "SALE", "T1", "c1", "p1")
    'tx:T1'
    >>> dedupe_key(DedupeMode.TXID, "SALE", None, "c1", "p1")
    'click:c1:SALE'
    >>> dedupe_key(DedupeMode.ALLOW_REPEATS, "FTD", "T1", "c1", "p1")
    'ftd:c1'
    """
    if event_type == BuiltinEvent.FTD:
        return f"ftd:{raw_click_id}"
    if mode in (DedupeMode.TXID, DedupeMode.ALLOW_REPEATS) and txid:
        return f"tx:{txid}"
    if mode is DedupeMode.ALLOW_REPEATS:
        return f"pb:{postback_id}"
    if mode is DedupeMode.WINDOW:
        return f"win:{raw_click_id}:{event_type}:{postback_id}"
    return f"click:{raw_click_id}:{event_type}"
