"""A merchant's mapping (its platform's preset plus the user's edits) applied to a payload:
the postback's fields in trilha's words (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from trilha.conversions.status import Status
from trilha.merchants import Merchant
from trilha.money import AmountError, check_currency, parse_amount
from trilha.postbacks.payload import Tree, get_path

UNFILLED_MACRO = re.compile(r"[{}\[\]]|^%[A-Za-z_][\w.-]*%$|^\$[A-Za-z_]\w*\$?$")
MAX_FIELD_LENGTH = 200


class MappingError(ValueError):
    """The payload does not give what a postback needs; the message is the `invalid` reason."""


@dataclass(frozen=True, slots=True)
class Fields:
    """What a postback says, in trilha's words."""

    click_id: str | None
    event_type: str
    status: str  # a Status, or IGNORE
    value: Decimal
    currency: str | None
    txid: str | None
    platform_event: str | None
    platform_status: str | None
    # Set when the merchant counts the net value but the postback gave only the gross one.
    value_note: str | None = None


NO_NET_VALUE = "the merchant counts the net value, but the postback has none: the gross was counted"


def read_field(merchant: Merchant, payload: Tree, name: str) -> str | None:
    """The first non-empty value among the field's paths, as text."""
    for path in merchant.paths(name):
        value = get_path(payload, path)
        if value is None or isinstance(value, dict | list):
            continue
        text = str(value).strip()
        if text.lower() not in merchant.preset.empty_values:
            return text
    return None


def map_fields(merchant: Merchant, payload: Tree, *, event_types: frozenset[str]) -> Fields:
    click_id = read_field(merchant, payload, "click_id")
    if click_id is not None and UNFILLED_MACRO.search(click_id):
        raise MappingError(f"the click id is an unfilled macro: {click_id[:60]!r}")
    if click_id is not None and len(click_id) > MAX_FIELD_LENGTH:
        raise MappingError("the click id is longer than 200 characters")
    platform_event = read_field(merchant, payload, "event")
    platform_status = read_field(merchant, payload, "status")
    event_type, status = classify(merchant, platform_event, platform_status)
    if event_type not in event_types:
        raise MappingError(f"unknown event type {event_type[:40]!r}; add it under event types")
    txid = read_field(merchant, payload, "txid")
    if txid is not None and len(txid) > MAX_FIELD_LENGTH:
        raise MappingError("the transaction id is longer than 200 characters")
    currency = read_field(merchant, payload, "currency")
    try:
        value, value_note = _value(merchant, payload)
        currency = check_currency(currency) if currency else merchant.preset.currency
    except AmountError as exc:
        raise MappingError(str(exc)) from None
    return Fields(
        click_id,
        event_type,
        status,
        value,
        currency,
        txid,
        platform_event,
        platform_status,
        value_note,
    )


def classify(merchant: Merchant, event: str | None, status: str | None) -> tuple[str, str]:
    """(event type, status) from the user's rules, then the preset's, then plain words."""
    for rule in (*merchant.rules, *merchant.preset.rules):
        if rule.matches(event, status):
            return rule.event_type, rule.status
    event_type = merchant.preset.default_event
    if event:
        event_type = merchant.preset.event_words.get(event.lower(), event.upper())
    if status is None:
        return event_type, Status.APPROVED
    mapped = merchant.preset.status_words.get(status.lower())
    if mapped is None:
        raise MappingError(f"unknown status {status[:40]!r}; add a rule to the merchant")
    return event_type, mapped


def _value(merchant: Merchant, payload: Tree) -> tuple[Decimal, str | None]:
    """The value to count, and a note when it is the gross one of a merchant that counts net."""
    unit = merchant.value_unit or merchant.preset.value_unit
    raw = note = None
    if merchant.value_choice == "net":
        raw = read_field(merchant, payload, "net_value")
    if raw is None:
        raw = read_field(merchant, payload, "value")
        if raw is not None and merchant.value_choice == "net":
            note = NO_NET_VALUE
    return (Decimal(0) if raw is None else parse_amount(raw, unit)), note
