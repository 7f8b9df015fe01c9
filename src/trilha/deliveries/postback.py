"""Postback URL templates: the redirect's macro language plus the conversion's own macros, and
ready templates for the trackers users run beside trilha."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from trilha.errors import InvalidInput
from trilha.macros import BUILTIN_MACROS, MACRO, fill_macros, unknown_macros
from trilha.validation import require_url_template

CONVERSION_MACROS: Final[dict[str, str]] = {
    "payout": "The conversion's value, e.g. 97.00.",
    "currency": "The value's ISO currency code, e.g. BRL.",
    "txid": "The sales platform's transaction id, or empty.",
    "status": "The conversion's status: approved, pending, declined, refunded or chargeback.",
    "event": "The event type, e.g. SALE or LEAD.",
    "conversion_id": "The conversion's id in trilha.",
    "conversion_time": "Unix time of the conversion's change being told, in seconds.",
}

# The tracker's own click id travels into trilha in a sub parameter of the tracking link (sub1
# here): the tracker's campaign URL passes it, e.g. ?sub1={subid} in Keitaro.
TEMPLATES: Final[dict[str, str]] = {
    "keitaro": "https://KEITARO-DOMAIN/POSTBACK-KEY/postback?subid={sub1}&status={status}"
    "&payout={payout}&currency={currency}&tid={txid}&lead_status=pending"
    "&sale_status=approved&rejected_status=declined,refunded,chargeback",
    "voluum": "https://VOLUUM-DOMAIN/postback?cid={sub1}&payout={payout}&txid={txid}"
    "&currency={currency}",
    "redtrack": "https://REDTRACK-DOMAIN/postback?clickid={sub1}&sum={payout}&type={event}"
    "&currency={currency}",
    "binom": "https://BINOM-DOMAIN/click.php?cnv_id={sub1}&payout={payout}&cnv_status={status}"
    "&cnv_currency={currency}",
}
# Each tracker's name as its maker writes it.
TRACKER_NAMES: Final[dict[str, str]] = {
    "keitaro": "Keitaro",
    "voluum": "Voluum",
    "redtrack": "RedTrack",
    "binom": "Binom",
}


def check_template(template: str, field: str = "url") -> str:
    """A postback URL template with a fixed scheme and host, and only known macros.

    >>> check_template("https://t.example/pb?cid={sub1}&p={payout}")
    'https://t.example/pb?cid={sub1}&p={payout}'
    >>> check_template("https://t.example/pb?cid={clickid}")
    Traceback (most recent call last):
    ...
    trilha.errors.InvalidInput: url: unknown macro {clickid}
    """
    template = require_url_template(template, field)
    unknown = unknown_macros(template, CONVERSION_MACROS)
    if unknown:
        names = ", ".join(f"{{{name}}}" for name in unknown)
        raise InvalidInput({field: f"unknown macro {names}"})
    return template


def fill_postback(template: str, values: Mapping[str, str]) -> str:
    """The template with click and conversion values filled; a macro without a value is left
    empty (the tracker then sees an empty parameter, not a literal ``{sub2}``).

    >>> fill_postback("https://t.example/pb?cid={sub1}&s={sub2}", {"sub1": "a b"})
    'https://t.example/pb?cid=a%20b&s='
    """
    names = {match.group(1) for match in MACRO.finditer(template)}
    known = BUILTIN_MACROS.keys() | CONVERSION_MACROS.keys()
    return fill_macros(template, {name: values.get(name, "") for name in names & known})
