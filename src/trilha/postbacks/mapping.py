"""A merchant's mapping (its platform's preset plus the user's edits) applied to a payload:
the postback's fields in trilha's words (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from trilha.conversions.status import Status
from trilha.merchants import Merchant
from trilha.money import AmountError, check_currency, parse_amount
from trilha.postbacks.event_time import read_event_time
from trilha.postbacks.payload import Tree, get_path
from trilha.postbacks.platforms import PRESETS
from trilha.postbacks.preset import IGNORE, Preset

GENERIC_PRESET = "generic"
UNFILLED_MACRO = re.compile(r"[{}\[\]]|^%[A-Za-z_][\w.-]*%$|^\$[A-Za-z_]\w*\$?$")
MAX_FIELD_LENGTH = 200
READ = ("click_id", "event", "status", "value", "currency", "txid")  # kept in the log as sent
# What tells a platform's postback apart: a body with none of them is not this platform's.
IDENTIFYING = ("event", "status", "txid")


class MappingError(ValueError):
    """The payload does not give what a postback needs; the message is the `invalid` reason.
    ``read``: the fields that were read, as sent, for the log."""

    def __init__(self, message: str, *, read: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.read = dict(read or {})


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
    occurred_at: datetime | None = None  # when the platform says the event happened


NO_NET_VALUE = "the merchant counts the net value, but the postback has none: the gross was counted"


def read_field(merchant: Merchant, payload: Tree, name: str) -> str | None:
    """The first non-empty value among the field's paths, as text."""
    return _first_value(merchant.paths(name), payload, merchant.preset)


def _first_value(paths: tuple[str, ...], payload: Tree, preset: Preset) -> str | None:
    for path in paths:
        value = get_path(payload, path)
        if value is None or isinstance(value, dict | list):
            continue
        text = str(value).strip()
        if text.lower() not in preset.empty_values:
            return text
    return None


def map_fields(merchant: Merchant, payload: Tree, *, event_types: frozenset[str]) -> Fields:
    """The postback's fields, or a MappingError naming every problem, the most fundamental
    first (the click id, then what the event is, then its details), with what was read. A body
    with none of the fields the preset tells its platform by is that one problem alone."""
    read = {name: read_field(merchant, payload, name) for name in READ}
    misfit = misfit_reason(merchant, payload, read)
    if misfit:
        raise MappingError(misfit, read={k: v for k, v in read.items() if v})
    click_id, txid = read["click_id"], read["txid"]
    problems = []
    if click_id is not None and UNFILLED_MACRO.search(click_id):
        problems.append(f"the click id is an unfilled macro: {click_id[:60]!r}")
    elif click_id is not None and len(click_id) > MAX_FIELD_LENGTH:
        problems.append("the click id is longer than 200 characters")
    event_type = status = None
    try:
        event_type, status = classify(merchant, read["event"], read["status"])
    except MappingError as exc:
        problems.append(str(exc))
    if event_type is not None and event_type not in event_types:
        problems.append(f"unknown event type {event_type[:40]!r}; add it under event types")
    if txid is not None and len(txid) > MAX_FIELD_LENGTH:
        problems.append("the transaction id is longer than 200 characters")
    value, value_note, currency = Decimal(0), None, read["currency"]
    try:
        value, value_note = _value(merchant, payload)
        currency = check_currency(currency) if currency else merchant.preset.currency
    except AmountError as exc:
        problems.append(str(exc))
    if status != IGNORE and click_id is None:  # an event the mapping ignores needs no click
        looked = ", ".join(merchant.paths("click_id"))
        problems.insert(0, f"no click id in the request (looked in: {looked})")
        if merchant.preset.name == GENERIC_PRESET:  # a platform's webhook sent to no merchant
            fitting = fitting_preset(payload, besides=GENERIC_PRESET)
            if fitting is not None:
                problems.append(
                    f"this looks like a webhook of {fitting.label!r}; "
                    "send it to a merchant on that preset"
                )
    if problems or event_type is None or status is None:
        raise MappingError("; ".join(problems), read={k: v for k, v in read.items() if v})
    return Fields(
        click_id,
        event_type,
        status,
        value,
        currency,
        txid,
        read["event"],
        read["status"],
        value_note,
        read_event_time(read_field(merchant, payload, "occurred_at")),
    )


def misfit_reason(
    merchant: Merchant, payload: Tree, read: Mapping[str, str | None] | None = None
) -> str | None:
    """Why the body is no postback of the merchant's platform, when it has none of the fields
    that tell one apart (a catch-all rule would otherwise ignore the sale it may be); naming
    the preset the body fits, when one does. The generic preset takes any body."""
    preset = merchant.preset
    if preset.name == GENERIC_PRESET:
        return None
    if read is None:
        read = {name: read_field(merchant, payload, name) for name in IDENTIFYING}
    if any(read[name] for name in IDENTIFYING):
        return None
    looked = ", ".join(path for name in IDENTIFYING for path in merchant.paths(name))
    reason = (
        f"the body has none of the fields the preset {preset.label!r} reads (looked in: {looked})"
    )
    fitting = fitting_preset(payload, besides=preset.name)
    if fitting is not None:
        reason += f"; this looks like a webhook of {fitting.label!r}; choose that preset"
    return reason


def fitting_preset(payload: Tree, *, besides: str) -> Preset | None:
    """The platform preset that reads the most of the body, among those that read its
    transaction id and its event or status."""
    best, best_count = None, 0
    for preset in PRESETS.values():
        if preset.name in (GENERIC_PRESET, besides):
            continue
        tree = preset.reshape(payload) if preset.reshape is not None else payload
        read = {name: _first_value(preset.paths.get(name, ()), tree, preset) for name in READ}
        if read["txid"] is None or (read["event"] is None and read["status"] is None):
            continue
        count = sum(value is not None for value in read.values())
        if count > best_count:
            best, best_count = preset, count
    return best


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
