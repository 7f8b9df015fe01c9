"""What the deliveries API reads and answers: destinations, the delivery log, notices."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from trilha.conversions.status import Status
from trilha.deliveries.destination import Destination
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import AttemptOutcome, DeliveryState, DestinationStatus, Kind, Method
from trilha.deliveries.send import Sent
from trilha.validation import MAX_URL
from trilha.web.api.postback_schemas import NEXT_BEFORE
from trilha.web.api.schemas import NAME_RULES, Answer, AwareUtcDatetime, Input, UtcDatetime, checked


class DestinationIn(Input):
    name: str = checked(**NAME_RULES)
    kind: Kind
    url: str = checked(
        "",
        description="postback: a URL template with macros (see GET /api/v1/destination-templates)"
        "; webhook: the URL to POST to; meta_capi and google_ads: unused.",
        maxLength=MAX_URL,
    )
    method: Method = Field(Method.GET, description="postback only; the others always POST.")
    event_types: list[str] = Field(
        default_factory=list, max_length=20, description="Empty: every event type."
    )
    statuses: list[Status] = Field(
        default_factory=list, max_length=5, description="Empty: every status."
    )
    campaign_id: str | None = checked(None, maxLength=40)
    source_id: str | None = checked(None, maxLength=40)
    sub_id: str | None = checked(None, description="Only clicks whose sub1 is this.", maxLength=200)
    secret: str | None = checked(
        None,
        description="meta_capi: the access token (required). google_ads: the OAuth refresh "
        "token (required). webhook: the signing secret (made when left out). Never shown "
        "back. On PUT, null keeps the stored one.",
        maxLength=500,
    )
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="meta_capi: pixel_id, action_source, event_names, refund_event, "
        "test_event_code. google_ads: customer_id, conversion_action, login_customer_id, "
        "client_id, client_secret, developer_token (credentials masked in answers, kept when "
        "left out). tiktok_events: pixel_code, event_names, test_event_code.",
    )
    currency: str | None = checked(
        None,
        description="Send values in this currency (ISO 4217), converted at the rate of the "
        "conversion's day; null: each conversion's own.",
        pattern=r"^\s*[A-Za-z]{3}\s*$",
    )

    def spec(self) -> Spec:
        return Spec(
            name=self.name,
            kind=self.kind,
            url=self.url,
            method=self.method,
            event_types=tuple(self.event_types),
            statuses=tuple(self.statuses),
            campaign_id=self.campaign_id,
            source_id=self.source_id,
            sub_id=self.sub_id,
            secret=self.secret,
            config=self.config,
            currency=self.currency,
        )


class DestinationOut(Answer):
    id: str
    name: str
    kind: Kind
    url: str
    method: Method
    event_types: list[str]
    statuses: list[Status]
    campaign_id: str | None
    source_id: str | None
    sub_id: str | None
    secret: str | None = Field(description="Masked: its last four characters at most.")
    config: dict[str, Any]
    currency: str | None = Field(description="Values sent in it; null: each conversion's own.")
    status: DestinationStatus
    status_reason: str = Field(description="Why it is inactive, when it is.")
    consecutive_failures: int
    paused_until: UtcDatetime | None = Field(
        description="Set when its requests went unanswered several times in a row: its "
        "deliveries wait until then, and one is tried before the others follow."
    )
    created_at: UtcDatetime
    updated_at: UtcDatetime

    @classmethod
    def of(cls, destination: Destination) -> DestinationOut:
        return cls(
            id=destination.id,
            name=destination.name,
            kind=destination.kind,
            url=destination.url,
            method=destination.method,
            event_types=list(destination.event_types),
            statuses=list(destination.statuses),
            campaign_id=destination.campaign_id,
            source_id=destination.source_id,
            sub_id=destination.sub_id,
            secret=destination.masked_secret,
            config=destination.masked_config,
            currency=destination.currency,
            status=destination.status,
            status_reason=destination.status_reason,
            consecutive_failures=destination.consecutive_failures,
            paused_until=destination.paused_until,
            created_at=destination.created_at,
            updated_at=destination.updated_at,
        )


class DestinationCreated(DestinationOut):
    signing_secret: str | None = Field(
        None, description="webhook: the signing secret trilha made, shown this once."
    )


class TemplateOut(BaseModel):
    name: str
    url: str


class MacroOut(BaseModel):
    name: str
    description: str


class TemplatesOut(BaseModel):
    templates: list[TemplateOut] = Field(description="Ready postback URLs of known trackers.")
    conversion_macros: list[MacroOut] = Field(
        description="Macros postback templates take besides the offer URLs' ones."
    )


class SentOut(BaseModel):
    outcome: AttemptOutcome
    request: str = Field(description="The request line and body, secrets masked.")
    status_code: int | None
    latency_ms: int
    response: str = Field(description="The answer's first 1000 characters.")
    error: str

    @classmethod
    def of(cls, sent: Sent) -> SentOut:
        return cls(
            outcome=sent.outcome,
            request=sent.request,
            status_code=sent.status_code,
            latency_ms=sent.latency_ms,
            response=sent.response,
            error=sent.error,
        )


class ResendIn(Input):
    since: AwareUtcDatetime = Field(description="Conversions recorded from this time on.")
    until: AwareUtcDatetime = Field(description="... and before this time.")


class ResendOut(BaseModel):
    queued: int = Field(description="Deliveries queued or sent again.")


class AttemptOut(Answer):
    id: str
    started_at: UtcDatetime
    request: str
    status_code: int | None
    latency_ms: int
    response: str
    error: str
    outcome: AttemptOutcome


class DeliveryOut(Answer):
    id: str
    destination_id: str
    destination_name: str
    conversion_id: str
    conversion_status: Status
    state: DeliveryState
    attempts: int
    next_attempt_at: UtcDatetime
    last_error: str
    created_at: UtcDatetime
    finished_at: UtcDatetime | None


class DeliveryDetail(DeliveryOut):
    attempts_log: list[AttemptOut] = Field(
        description="Every attempt kept (30 days by default), oldest first."
    )


class DeliveryPage(BaseModel):
    deliveries: list[DeliveryOut] = Field(description="Newest first.")
    next_before: str | None = NEXT_BEFORE


class NoticeOut(Answer):
    id: str
    destination_id: str | None
    message: str
    created_at: UtcDatetime
    read_at: UtcDatetime | None
