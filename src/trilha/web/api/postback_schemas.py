"""What the postback side of the REST API reads and answers: merchants, presets, event types,
conversions and the postback log.

Apart from trilha.web.api.schemas only to keep each file short; the same conventions hold.
A merchant's `secret` is write-only: answers say `has_secret` instead.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trilha.conversions.dedupe import DedupeMode
from trilha.conversions.lookup import Conversion, StatusChange
from trilha.conversions.outcome import Outcome
from trilha.conversions.status import Status
from trilha.currencies import RateSource
from trilha.event_types import NAME as EVENT_TYPE_NAME
from trilha.merchants import (
    KEY,
    MAX_SECRET,
    MAX_WINDOW,
    MIN_SECRET,
    MerchantRow,
    MerchantWarning,
)
from trilha.money import ValueUnit
from trilha.postbacks.preset import AuthKind, Preset
from trilha.postbacks.trial import Trial
from trilha.web.api.schemas import (
    HOLD_RULES,
    NAME_RULES,
    Answer,
    Input,
    Patch,
    UtcDatetime,
    checked,
    either_case,
)

ValueChoice = Literal["gross", "net"]
MERCHANT_KEY_RULES: dict[str, Any] = {"pattern": either_case(KEY.pattern)}
WINDOW_RULES: dict[str, Any] = {"minimum": 1, "maximum": MAX_WINDOW}
# Blank (no secret), or up to MAX_SECRET characters once the spaces around are trimmed; the
# minimum for a secret a person invents depends on the preset, so the domain checks it.
SECRET_RULES: dict[str, Any] = {"pattern": rf"^\s*$|^\s*\S([\s\S]{{0,{MAX_SECRET - 2}}}\S)?\s*$"}
SECRET_RULE = (
    f"The platform's token, hottok or key, as the platform issues it (up to {MAX_SECRET} "
    f"characters); for the `generic` preset, a shared secret of at least {MIN_SECRET} characters."
)
NEXT_BEFORE = Field(description="Pass as `before` for the next page; null on the last page.")


class RuleModel(Answer):
    model_config = ConfigDict(from_attributes=True, extra="forbid")
    when_event: str | None = Field(None, description="The platform's event name; null: any.")
    when_status: str | None = Field(None, description="The platform's status; null: any.")
    event_type: str = Field(description="The event type it counts as, e.g. `SALE`.")
    status: str = Field(
        description="approved, pending, declined, refunded, chargeback, or `ignore` (log only)."
    )


class MerchantIn(Input):
    key: str = checked(
        description="Names the merchant in its postback URL, /pb/{key}.", **MERCHANT_KEY_RULES
    )
    name: str = checked(**NAME_RULES)
    preset: str = Field(description="A preset's `name` from GET /presets.")
    field_paths: dict[str, str] = Field(
        default_factory=dict,
        description="Field name → path tried before the preset's, e.g. "
        '{"click_id": "data.purchase.origin.xcod"}.',
    )
    rules: list[RuleModel] = Field(
        default_factory=list, description="Tried before the preset's rules, in order."
    )
    value_choice: ValueChoice = Field("gross", description="Count what the buyer paid, or net.")
    value_unit: ValueUnit | None = Field(None, description="null: the preset's unit.")
    ip_allowlist: list[str] = Field(
        default_factory=list, description="IPs or CIDR networks; empty: any address."
    )
    secret: str | None = checked(
        None,
        description=f"{SECRET_RULE} Write-only: never answered.",
        **SECRET_RULES,
    )
    dedupe_mode: DedupeMode = DedupeMode.TXID
    dedupe_window_minutes: int = checked(
        60, description="For dedupe_mode `window`, in minutes.", **WINDOW_RULES
    )
    hold_days: int | None = checked(
        None,
        description="Days this merchant's approved revenue stays on hold (its refund window); "
        "null: the workspace's.",
        **HOLD_RULES,
    )


class MerchantPatch(Patch):
    NULLABLE = frozenset({"value_unit", "secret", "hold_days"})
    key: str | None = checked(None, **MERCHANT_KEY_RULES)
    name: str | None = checked(None, **NAME_RULES)
    preset: str | None = None
    field_paths: dict[str, str] | None = None
    rules: list[RuleModel] | None = None
    value_choice: ValueChoice | None = None
    value_unit: ValueUnit | None = None
    ip_allowlist: list[str] | None = None
    secret: str | None = checked(
        None,
        description=f"A new secret; null removes it. {SECRET_RULE}",
        **SECRET_RULES,
    )
    dedupe_mode: DedupeMode | None = None
    dedupe_window_minutes: int | None = checked(None, **WINDOW_RULES)
    hold_days: int | None = checked(
        None,
        description="Days this merchant's approved revenue stays on hold (its refund window); "
        "null: the workspace's.",
        **HOLD_RULES,
    )


class MerchantOut(Answer):
    id: str
    key: str
    name: str
    preset: str
    field_paths: dict[str, str]
    rules: list[RuleModel]
    value_choice: ValueChoice
    value_unit: ValueUnit | None
    ip_allowlist: list[str]
    has_secret: bool = Field(description="Whether postbacks must carry the merchant's secret.")
    warnings: list[MerchantWarning] = Field(
        description="What works but should be changed. `short_secret`: the secret has fewer "
        f"than {MIN_SECRET} characters (as the platform issued it, or set before generic "
        "secrets needed that many); it authenticates, but could be guessed: where the platform "
        "can issue a longer one, set it there and here."
    )
    dedupe_mode: DedupeMode
    dedupe_window_minutes: int
    hold_days: int | None = Field(description="null: the workspace's hold period.")
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @classmethod
    def of(cls, merchant: MerchantRow) -> MerchantOut:
        return cls.model_validate(merchant)


class MerchantDetail(MerchantOut):
    postback_url: str | None = Field(
        description="The URL to paste into the platform. It holds the workspace's secret "
        "token, so only members and owners see it; null for viewers."
    )
    setup: str = Field(description="Where the preset's platform takes the URL and the secret.")


class PresetOut(BaseModel):
    name: str
    label: str
    auth: AuthKind = Field(description="How postbacks prove they come from the platform.")
    auth_param: str = Field(description="The signature's query parameter or header, if any.")
    value_unit: ValueUnit
    default_event: str
    field_paths: dict[str, list[str]] = Field(description="Field name → paths tried, in order.")
    rules: list[RuleModel]
    setup: str

    @classmethod
    def of(cls, preset: Preset) -> PresetOut:
        return cls(
            name=preset.name,
            label=preset.label,
            auth=preset.auth,
            auth_param=preset.auth_param,
            value_unit=preset.value_unit,
            default_event=preset.default_event,
            field_paths={name: list(paths) for name, paths in preset.paths.items()},
            rules=[RuleModel.model_validate(rule) for rule in preset.rules],
            setup=preset.setup,
        )


class EventTypeIn(Input):
    name: str = checked(
        description="1 to 40 of A-Z 0-9 _, starting with a letter; upper-cased.",
        pattern=either_case(EVENT_TYPE_NAME.pattern),
    )
    counts_as_conversion: bool = True
    counts_as_revenue: bool = False


class EventTypePatch(Patch):
    counts_as_conversion: bool | None = None
    counts_as_revenue: bool | None = None


class EventTypeOut(Answer):
    id: str
    name: str
    counts_as_conversion: bool
    counts_as_revenue: bool
    is_builtin: bool = Field(description="Built-in types can change their flags, not go away.")


class ConversionOut(Answer):
    id: str
    event_type: str
    status: Status
    value: Decimal = Field(description='Exact, as a decimal string: "97.00".')
    currency: str
    txid: str | None
    click_id: str | None = Field(description="The click it is attributed to; null: an orphan.")
    raw_click_id: str | None = Field(description="The click id the platform sent.")
    campaign_id: str | None
    source_id: str | None
    merchant_id: str | None
    created_at: UtcDatetime
    status_changed_at: UtcDatetime
    status_occurred_at: UtcDatetime | None = Field(
        description="When the platform says the current status happened, where its payload "
        "tells (Hotmart's `creation_date`, ...); a report of an older event never overwrites it."
    )
    attached_at: UtcDatetime | None = Field(description="When an orphan found its click.")
    is_test: bool = Field(description='Made by "send test postback": never counted, and deletable.')
    report_value: Decimal | None = Field(
        description="The value in the workspace's currency at the rate of its day, as reports "
        "count it; null: no rate known for its currency yet (reports leave it out)."
    )
    report_currency: str | None
    rate: Decimal | None = Field(description="One unit of `currency` in `report_currency`.")
    rate_source: RateSource | None = Field(
        description="`same` (no conversion), `ecb` (the ECB's reference rate) or `workspace` "
        "(the workspace's rate table)."
    )

    @classmethod
    def of(cls, conversion: Conversion) -> ConversionOut:
        return cls.model_validate(conversion)


class StatusChangeOut(Answer):
    from_status: Status | None = Field(description="null: the conversion was created.")
    to_status: Status
    actor: str = Field(description='Who made the change: "postback" or "replay".')
    postback_id: str | None = Field(description="The postback log entry that made the change.")
    created_at: UtcDatetime
    occurred_at: UtcDatetime | None = Field(
        description="When the platform says the event happened; null: its payload does not say."
    )


class ConversionDetail(ConversionOut):
    history: list[StatusChangeOut] = Field(description="Oldest first, from its creation.")

    @classmethod
    def with_history(cls, conversion: Conversion, history: list[StatusChange]) -> ConversionDetail:
        return cls(
            **ConversionOut.of(conversion).model_dump(),
            history=[StatusChangeOut.model_validate(change) for change in history],
        )


class ConversionPage(BaseModel):
    conversions: list[ConversionOut] = Field(description="Newest first.")
    next_before: str | None = NEXT_BEFORE


class ForgetBuyerIn(Input):
    email: str | None = Field(None, max_length=320, description="The buyer's e-mail.")
    cpf: str | None = Field(
        None, max_length=40, description="The buyer's CPF or CNPJ, with or without punctuation."
    )


class ForgottenOut(Answer):
    log_entries: int = Field(description="Postback log entries whose payload was emptied.")
    conversions: int = Field(description="Conversions whose buyer hashes were erased.")
    delivery_attempts: int = Field(
        description="Delivery attempts whose request and response were replaced by [forgotten]."
    )
    clicks: int = Field(
        description="Clicks whose sub-ids, parameters or referrer named the buyer, now "
        "[forgotten] (the clicks stay counted)."
    )
    unmatched_samples: int = Field(description="Samples of unmatched postbacks deleted.")


class AttachIn(Input):
    click_id: str = Field(description="A click of the workspace the sale came from.")


class PostbackOut(Answer):
    """A postback log entry, without the request's query, headers and body."""

    id: str
    received_at: UtcDatetime
    outcome: Outcome
    reason: str
    merchant_id: str | None
    method: str
    path: str
    source_ip: str
    auth_failed: bool = Field(description="It failed the merchant's secret check: no replay.")
    conversion_id: str | None
    campaign_id: str | None
    click_id: str | None = Field(description="The click id the request carried.")
    txid: str | None
    event_type: str | None
    status: str | None
    value: str | None
    currency: str | None
    processing_us: int = Field(description="Time to process it, in microseconds.")
    replay_of: str | None = Field(description="The entry this one replayed.")


class PostbackDetail(PostbackOut):
    query: str = Field(description="The query string; secrets show as ********.")
    headers: list[tuple[str, str]] = Field(description="[name, value] pairs, secrets masked.")
    body: str = Field(description="The body as text, secrets masked.")
    body_truncated: bool = Field(description="Only the first 256 KiB of the body were kept.")
    payload_purged_at: UtcDatetime | None = Field(
        None,
        description="When query, headers and body were emptied (the payload retention, or a "
        "forgotten buyer); the entry's outcome, reason and fields stay.",
    )
    details: dict[str, Any] = Field(description="E.g. the stored value a duplicate differed by.")


class PostbackPage(BaseModel):
    postbacks: list[PostbackOut] = Field(description="Newest first.")
    next_before: str | None = NEXT_BEFORE


class ReplayIn(Input):
    ids: list[str] = Field(
        min_length=1, max_length=500, description="Log entries whose outcome is invalid or orphan."
    )


class ReplayOut(BaseModel):
    replay_of: str = Field(description="The entry replayed.")
    outcome: Outcome
    reason: str
    conversion_id: str | None
    postback_id: str | None = Field(description="The replay's own log entry.")


class TrialIn(Input):
    click_id: str | None = Field(
        None, description="A click of the workspace; left out: a made-up one (an orphan)."
    )
    event_type: str = Field(description="E.g. SALE; the mapping must give it.")
    status: Status
    value: Decimal = Field(ge=0, le=10_000_000, decimal_places=2, description='E.g. "97.00".')
    currency: str | None = Field(None, description="Left out: the workspace's currency.")
    txid: str | None = Field(None, max_length=200, description="Left out: a made-up TEST-....")


class SentRequestOut(Answer):
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: str


class TrialOut(BaseModel):
    outcome: Outcome
    reason: str
    http_status: int = Field(description="What the platform would have been answered.")
    event_type: str | None
    status: str | None
    conversion_id: str | None
    postback_id: str | None = Field(description="Its entry in the postback log.")
    request: SentRequestOut = Field(description="The request sent, secrets masked.")

    @classmethod
    def of(cls, trial: Trial) -> TrialOut:
        result = trial.result
        return cls(
            outcome=result.outcome,
            reason=result.reason,
            http_status=result.http_status,
            event_type=result.event_type,
            status=result.status,
            conversion_id=result.conversion_id,
            postback_id=result.postback_id,
            request=SentRequestOut.model_validate(trial.sent),
        )
