"""What a preset is: where a platform puts a postback's fields, and what its events mean.

A preset is data (field paths, status rules, how it authenticates) plus, where a platform needs
it, a small pure function that reshapes the payload first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from trilha.conversions.status import Status
from trilha.event_types import BuiltinEvent
from trilha.money import ValueUnit
from trilha.postbacks.payload import Tree

IGNORE: Final = "ignore"


class SecretOrigin(StrEnum):
    """Who makes a merchant's secret: the platform issues it, or a person invents it."""

    PLATFORM = "platform"  # taken as issued, however short (Kiwify's tokens have 11 characters)
    PERSON = "person"  # a shared secret someone makes up: it must be long enough not to guess


class AuthKind(StrEnum):
    NONE = "none"
    FIELD = "field"  # a field (body, query or header) equals the secret
    HMAC_SHA1_QUERY = "hmac_sha1_query"  # Kiwify: ?signature= HMAC-SHA1(raw body)
    HMAC_SHA256_HEADER = "hmac_sha256_header"  # Eduzz v3: x-signature: HMAC-SHA256(raw body)


@dataclass(frozen=True, slots=True)
class Rule:
    """Platform event and/or status (case-insensitive; None matches anything) → ours.

    ``status`` is one of Status, or IGNORE for events to log and never count.
    """

    event_type: str
    status: str
    when_event: str | None = None
    when_status: str | None = None

    def matches(self, event: str | None, status: str | None) -> bool:
        return _same(self.when_event, event) and _same(self.when_status, status)


def _same(expected: str | None, actual: str | None) -> bool:
    return expected is None or (actual is not None and expected.lower() == actual.lower())


FIELDS = (
    "click_id",
    "event",
    "status",
    "value",
    "net_value",
    "currency",
    "txid",
    "secret",
    "occurred_at",  # the platform's own time of the event (trilha.postbacks.event_time)
)

# Words platforms and people use for our event types and statuses.
EVENT_WORDS: Final[Mapping[str, str]] = {
    "venda": BuiltinEvent.SALE,
    "sale": BuiltinEvent.SALE,
    "purchase": BuiltinEvent.SALE,
    "compra": BuiltinEvent.SALE,
    "lead": BuiltinEvent.LEAD,
    "upsell": BuiltinEvent.UPSELL,
    "rebill": BuiltinEvent.REBILL,
    "renovacao": BuiltinEvent.REBILL,
    "ftd": BuiltinEvent.FTD,
    "first_deposit": BuiltinEvent.FTD,
    "deposit": BuiltinEvent.DEPOSIT,
    "dep": BuiltinEvent.DEPOSIT,
    "redeposit": BuiltinEvent.DEPOSIT,
    "deposito": BuiltinEvent.DEPOSIT,
    "registration": BuiltinEvent.REGISTRATION,
    "reg": BuiltinEvent.REGISTRATION,
    "signup": BuiltinEvent.REGISTRATION,
    "cadastro": BuiltinEvent.REGISTRATION,
}
STATUS_WORDS: Final[Mapping[str, str]] = {
    **dict.fromkeys(
        (
            "approved",
            "aprovado",
            "aprovada",
            "paid",
            "pago",
            "paga",
            "complete",
            "completed",
            "confirmed",
            "success",
            "1",
        ),
        Status.APPROVED,
    ),
    **dict.fromkeys(
        (
            "pending",
            "pendente",
            "waiting",
            "waiting_payment",
            "aguardando",
            "processing",
            "hold",
            # Overdue or expired: the platform may still collect it, and an approval then counts.
            "overdue",
            "delayed",
            "late",
            "atrasado",
            "atrasada",
            "expired",
            "expirado",
            "expirada",
        ),
        Status.PENDING,
    ),
    **dict.fromkeys(
        (
            "declined",
            "recusado",
            "recusada",
            "rejected",
            "refused",
            "canceled",
            "cancelled",
            "cancelado",
            "cancelada",
            "0",
        ),
        Status.DECLINED,
    ),
    **dict.fromkeys(
        ("refunded", "refund", "reembolsado", "reembolsada", "reembolso", "estornado", "devolvida"),
        Status.REFUNDED,
    ),
    **dict.fromkeys(("chargeback", "chargedback", "charged_back"), Status.CHARGEBACK),
}


@dataclass(frozen=True, slots=True)
class Preset:
    name: str
    label: str
    paths: Mapping[str, tuple[str, ...]]  # field name → paths to try, in order
    rules: tuple[Rule, ...]
    value_unit: ValueUnit = ValueUnit.DECIMAL
    auth: AuthKind = AuthKind.NONE
    auth_param: str = ""  # header name, or query parameter, for the HMAC kinds
    default_event: str = BuiltinEvent.SALE
    # What the amounts are in when the platform sends no currency field: Monetizze, Braip and
    # Ticto sell in reais only, so the workspace's own currency would be wrong outside BRL.
    currency: str | None = None
    # Values a platform sends for "empty", treated as missing (Ticto's "Não Informado").
    empty_values: frozenset[str] = frozenset({"", "null", "none", "undefined"})
    event_words: Mapping[str, str] = field(default_factory=lambda: EVENT_WORDS)
    status_words: Mapping[str, str] = field(default_factory=lambda: STATUS_WORDS)
    reshape: Callable[[Tree], Tree] | None = None
    setup: str = ""  # the URL parameters or body fields the platform's settings need
    secret_names: tuple[str, ...] = field(default=())  # extra field names to mask in the log
    secret_origin: SecretOrigin = SecretOrigin.PLATFORM
