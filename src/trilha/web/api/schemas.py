"""What the REST API reads and answers, apart from the database tables in trilha.db.schema.

Request models forbid unknown fields, so a misspelt field answers 422 instead of being ignored.
In a PATCH body a field left out stays as it is; ``null`` clears a field that may be empty and
is refused for one that may not.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from trilha.accounts import ApiKey
from trilha.campaigns import (
    PARAM_NAME_MAX,
    Campaign,
    CampaignStatus,
    ParamMapping,
    TrafficSource,
)
from trilha.custom_domains import Check, CheckResult, Domain, DomainStatus
from trilha.hold import MAX_HOLD_DAYS
from trilha.invitations import Invitation
from trilha.validation import CURRENCY, MAX_URL, NAME_MAX, SLUG, TEXT_MAX
from trilha.workspaces import Member, Membership, Role


def checked(default: Any = ..., *, description: str | None = None, **rules: Any) -> Any:
    """A field with what the server checks of it stated for OpenAPI (``maxLength``, ``pattern``,
    ``minimum``...). The checks themselves, with their messages, are the domain's
    (trilha.validation and each module's own); a value that keeps to these is never refused for
    them. Patterns allow the spaces the server trims, and either case where it folds case."""
    return Field(default, description=description, json_schema_extra=rules)


def either_case(pattern: str) -> str:
    r"""A domain pattern of one case, for a value the server lower- or upper-cases first.

    >>> either_case("[a-z0-9][a-z0-9_-]{0,63}")
    '^\\s*[A-Za-z0-9][A-Za-z0-9_-]{0,63}\\s*$'
    """
    return r"^\s*" + re.sub(r"a-z|A-Z", "A-Za-z", pattern) + r"\s*$"


NOT_BLANK = r"\S"  # at least one character that is not a space
NAME_RULES: dict[str, Any] = {"maxLength": NAME_MAX, "pattern": NOT_BLANK}
URL_RULES: dict[str, Any] = {"maxLength": MAX_URL, "pattern": r"^\s*[Hh][Tt][Tt][Pp][Ss]?://"}
CURRENCY_RULES: dict[str, Any] = {"pattern": either_case(CURRENCY.pattern)}
HOLD_RULES: dict[str, Any] = {"minimum": 0, "maximum": MAX_HOLD_DAYS}
HOLD_DAYS = (
    "Days approved revenue stays on hold (the refund window) before reports count it as "
    "available; 0: at once."
)


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:04+04:00 is before the first UTC time there is
        raise ValueError("is outside the range of dates") from None


UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]
# A filter's time must say its offset: a bare "2024-05-01T00:00" could mean any zone.
AwareUtcDatetime = Annotated[AwareDatetime, AfterValidator(as_utc)]


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _null_only_where_allowed(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """A PATCH field is optional, not nullable: OpenAPI says ``null`` only where it clears."""
    nullable: frozenset[str] = getattr(model, "NULLABLE", frozenset())
    for name, field in schema.get("properties", {}).items():
        options = field.get("anyOf")
        if name in nullable or not options:
            continue
        kept = [option for option in options if option != {"type": "null"}]
        if len(kept) == 1:
            del field["anyOf"]
            field.update(kept[0])
        else:
            field["anyOf"] = kept
        if "default" in field and field["default"] is None:
            del field["default"]


class Patch(Input):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_null_only_where_allowed)
    NULLABLE: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_null(cls, value: object, info: ValidationInfo) -> object:
        if value is None and info.field_name not in cls.NULLABLE:
            raise PydanticCustomError("null", "must not be null; leave it out to keep its value")
        return value


class Answer(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class ErrorOut(BaseModel):
    detail: str = Field(description="What went wrong, for people.")
    errors: dict[str, str] | None = Field(
        None, description="Field name → message, for invalid input and conflicts."
    )


def error(description: str) -> dict[str, Any]:
    return {"model": ErrorOut, "description": description}


AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: error("No API key, or an invalid or revoked one"),
    403: error("Your role does not allow this, or the session's CSRF token is missing"),
    422: error("Invalid input; `errors` names each field"),
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: error("Not found, or in a workspace you are not a member of")
}
CONFLICT: dict[int | str, dict[str, Any]] = {409: error("It would break a uniqueness rule")}
# What any operation may answer before its handler runs, refused by the edge (trilha.web.edge)
# or by the API's route class (trilha.web.api.routing).
REQUEST_ERRORS: dict[int | str, dict[str, Any]] = {
    400: error("A path, query, header or body that is no text: a NUL, bytes that are no UTF-8"),
    408: error("The body did not arrive within the body timeout"),
    413: error("The body is over the request body limit"),
}
REPORT_LIMITS: dict[int | str, dict[str, Any]] = {
    429: error("The workspace's reports at once are running; retry after `Retry-After` seconds"),
    503: error("The report ran past its time limit and was stopped; `Retry-After` says when"),
}


class HealthOut(BaseModel):
    status: Literal["ok", "unavailable"]
    database: Literal["ok", "unreachable"]


class UserOut(Answer):
    id: str
    email: str
    name: str
    locale: str


class UserPatch(Patch):
    name: str | None = Field(None, max_length=NAME_MAX)
    locale: Literal["pt-BR", "en"] | None = None


class ApiKeyIn(Input):
    name: str = checked(
        description="A label to recognise the key by, e.g. the script using it.", **NAME_RULES
    )


class ApiKeyOut(Answer):
    id: str
    name: str
    prefix: str = Field(description="The first characters of the secret, to tell keys apart.")
    created_at: UtcDatetime
    last_used_at: UtcDatetime | None
    revoked_at: UtcDatetime | None

    @classmethod
    def of(cls, key: ApiKey) -> ApiKeyOut:
        return cls.model_validate(key)


class ApiKeyCreated(ApiKeyOut):
    secret: str = Field(description="The key itself. Shown this once only; store it now.")


class WorkspaceIn(Input):
    name: str = checked(**NAME_RULES)
    timezone: str = Field("America/Sao_Paulo", description="IANA time zone for reports.")
    currency: str = checked(
        "BRL", description="ISO 4217 code of the workspace's money.", **CURRENCY_RULES
    )
    fallback_url: str | None = checked(
        None, description="Where visitors of unknown or paused links go.", **URL_RULES
    )


class WorkspacePatch(Patch):
    NULLABLE = frozenset({"fallback_url"})
    name: str | None = checked(None, **NAME_RULES)
    timezone: str | None = None
    currency: str | None = checked(None, **CURRENCY_RULES)
    fallback_url: str | None = checked(None, **URL_RULES)
    keeps_buyer_data: bool | None = Field(
        None,
        description="true: keep buyers' personal data in clear in stored payloads (see the "
        "answer's privacy_warning); false, the default: mask it.",
    )
    hold_days: int | None = checked(None, description=HOLD_DAYS, **HOLD_RULES)


KEEPS_BUYER_DATA_WARNING = (
    "buyers' personal data (e-mail, name, phone, CPF/CNPJ, address) is kept in clear in the "
    "postback log until the payload retention; under the LGPD the workspace must have a legal "
    "basis for keeping it"
)


class WorkspaceOut(Answer):
    id: str
    name: str
    timezone: str
    currency: str
    fallback_url: str | None
    created_at: UtcDatetime
    role: Role = Field(description="Your role in the workspace.")
    keeps_buyer_data: bool = Field(
        False, description="Whether buyers' personal data is kept in clear (default: masked)."
    )
    privacy_warning: str | None = Field(
        None, description="Set while buyers' personal data is kept in clear."
    )
    hold_days: int = Field(0, description=HOLD_DAYS)

    @classmethod
    def of(cls, membership: Membership) -> WorkspaceOut:
        workspace = membership.workspace  # listed field by field: the token must not slip in
        return cls(
            id=workspace.id,
            name=workspace.name,
            timezone=workspace.timezone,
            currency=workspace.currency,
            fallback_url=workspace.fallback_url,
            created_at=workspace.created_at,
            role=membership.role,
            keeps_buyer_data=workspace.keeps_buyer_data,
            privacy_warning=KEEPS_BUYER_DATA_WARNING if workspace.keeps_buyer_data else None,
            hold_days=workspace.hold_days,
        )


class WorkspaceDetail(WorkspaceOut):
    postback_url: str | None = Field(
        description="Where sales platforms send postbacks. It holds the workspace's secret "
        "token, so only members and owners see it; null for viewers."
    )


class MemberIn(Input):
    email: str = Field(description="E-mail of an existing trilha user.")
    role: Role


class MemberPatch(Input):
    role: Role


class InvitationIn(Input):
    email: str = Field(description="Who may join: their account, or the one the link makes.")
    role: Role = Role.MEMBER


class InvitationOut(Answer):
    id: str
    email: str
    role: Role
    created_at: UtcDatetime
    expires_at: UtcDatetime

    @classmethod
    def of(cls, invitation: Invitation) -> InvitationOut:
        return cls.model_validate(invitation)


class NewInvitationOut(InvitationOut):
    url: str = Field(description="The one-time link to send; shown only in this answer.")


class MemberOut(Answer):
    user_id: str
    email: str
    name: str
    role: Role
    created_at: UtcDatetime

    @classmethod
    def of(cls, member: Member) -> MemberOut:
        return cls.model_validate(member)


class DomainIn(Input):
    host: str = Field(description="A domain such as track.example.com, pointed at trilha.")
    fallback_url: str | None = checked(None, **URL_RULES)


class DomainPatch(Input):
    fallback_url: str | None = checked(
        description="Where unknown slugs on this domain go; null: none.", **URL_RULES
    )


class DnsRecordOut(BaseModel):
    name: str = Field(description="Where the record goes: `_trilha.` and the domain.")
    type: Literal["TXT"] = "TXT"
    value: str = Field(description="What the record holds: this domain's own token.")


class DomainOut(Answer):
    id: str
    host: str
    fallback_url: str | None
    created_at: UtcDatetime
    status: DomainStatus = Field(
        description="`pending`: routes nothing until its DNS record is verified; `verified`: "
        "its links, clicks and token-less postbacks reach this workspace."
    )
    dns_record: DnsRecordOut = Field(
        description="The TXT record that proves control of the domain; publish it at your DNS "
        "provider, then call `POST …/domains/{id}/verify`."
    )
    verified_at: UtcDatetime | None
    checked_at: UtcDatetime | None = Field(description="When its record was last looked at.")
    check_error: str | None = Field(
        description="Why the last look did not prove control; null when it did. A verified "
        "domain whose checks fail for 7 days is pending again."
    )

    @classmethod
    def of(cls, domain: Domain) -> DomainOut:
        return cls(
            id=domain.id,
            host=domain.host,
            fallback_url=domain.fallback_url,
            created_at=domain.created_at,
            status=domain.status,
            dns_record=DnsRecordOut(name=domain.record_name, value=domain.verification_token),
            verified_at=domain.verified_at,
            checked_at=domain.checked_at,
            check_error=domain.check_error,
        )


class DomainVerificationOut(BaseModel):
    result: CheckResult = Field(
        description="`verified`, or why not yet: `no_record`, `wrong_value`, `dns_error`."
    )
    reason: str | None = Field(description="Why the record proves nothing yet; null if it does.")
    domain: DomainOut

    @classmethod
    def of(cls, domain: Domain, check: Check) -> DomainVerificationOut:
        return cls(result=check.result, reason=check.reason, domain=DomainOut.of(domain))


class ParamMappingModel(Answer):
    model_config = ConfigDict(from_attributes=True, extra="forbid")
    param: str = checked(
        description="Query parameter name on the source's links, e.g. `cid`.",
        minLength=1,
        maxLength=PARAM_NAME_MAX,
    )
    field: str = Field(description="Click field it fills, e.g. `ad_id`, `sub1`, `utm_source`.")


def mappings(params: list[ParamMappingModel]) -> tuple[ParamMapping, ...]:
    return tuple(ParamMapping(p.param, p.field) for p in params)


class SourceIn(Input):
    name: str = checked(**NAME_RULES)
    params: list[ParamMappingModel] = Field(default_factory=list)


class SourcePatch(Patch):
    name: str | None = checked(None, **NAME_RULES)
    params: list[ParamMappingModel] | None = None


class SourceOut(Answer):
    id: str
    name: str
    params: list[ParamMappingModel]
    created_at: UtcDatetime

    @classmethod
    def of(cls, source: TrafficSource) -> SourceOut:
        return cls.model_validate(source)


HOST_FIELD = Field("", description='A custom domain of the workspace; "" for the default one.')
OFFER_URL = "http(s) URL; macros such as {click_id}, after the host, are filled per click."
CAMPAIGN_NAME_RULES: dict[str, Any] = {"maxLength": TEXT_MAX, "pattern": NOT_BLANK}
SLUG_RULES: dict[str, Any] = {"pattern": either_case(SLUG.pattern)}


class CampaignIn(Input):
    name: str = checked(**CAMPAIGN_NAME_RULES)
    slug: str = checked(description="The tracking link's path: /r/{slug}.", **SLUG_RULES)
    host: str = HOST_FIELD
    offer_url: str = checked(description=OFFER_URL, **URL_RULES)
    source_id: str | None = None
    merchant_id: str | None = Field(
        None, description="The merchant whose postbacks land on its clicks by default."
    )
    status: CampaignStatus = CampaignStatus.ACTIVE
    fallback_url: str | None = checked(
        None, description="Where visitors go while it is paused.", **URL_RULES
    )


class CampaignPatch(Patch):
    NULLABLE = frozenset({"source_id", "merchant_id", "fallback_url"})
    name: str | None = checked(None, **CAMPAIGN_NAME_RULES)
    slug: str | None = checked(None, **SLUG_RULES)
    host: str | None = None
    offer_url: str | None = checked(None, description=OFFER_URL, **URL_RULES)
    source_id: str | None = None
    merchant_id: str | None = None
    status: CampaignStatus | None = None
    fallback_url: str | None = checked(None, **URL_RULES)


class CampaignOut(Answer):
    id: str
    name: str
    slug: str
    host: str
    offer_url: str
    source_id: str | None
    merchant_id: str | None
    status: CampaignStatus
    fallback_url: str | None
    created_at: UtcDatetime
    updated_at: UtcDatetime
    tracking_url: str = Field(description="The link to give the traffic source.")

    @classmethod
    def of(cls, campaign: Campaign, base_url: str) -> CampaignOut:
        return cls(**asdict(campaign), tracking_url=campaign.tracking_url(base_url))


class ClickOut(Answer):
    """A stored click; each click field is null when the link did not carry it."""

    id: str
    campaign_id: str
    source_id: str | None
    created_at: UtcDatetime
    ip: str
    user_agent: str
    device_type: str
    os: str
    browser: str
    country: str
    referrer: str
    is_bot: bool
    is_unique: bool = Field(
        description="First click of this person on the campaign in 24 h; a bot's never is."
    )
    # The click fields, in the order of trilha.dimensions.DIMENSIONS (a test keeps them in step).
    creative: str | None = None
    ad_id: str | None = None
    ad_name: str | None = None
    adset_id: str | None = None
    adset_name: str | None = None
    placement: str | None = None
    site_id: str | None = None
    keyword: str | None = None
    fbclid: str | None = None
    gclid: str | None = None
    ttclid: str | None = None
    utm_source: str | None = None
    utm_medium: str | None = None
    utm_campaign: str | None = None
    utm_term: str | None = None
    utm_content: str | None = None
    sub1: str | None = None
    sub2: str | None = None
    sub3: str | None = None
    sub4: str | None = None
    sub5: str | None = None
    sub6: str | None = None
    sub7: str | None = None
    sub8: str | None = None
    sub9: str | None = None
    sub10: str | None = None
    params: dict[str, str] = Field(description="Other query parameters of the tracking link.")


class PreviewIn(Input):
    template: str = checked(
        description="An offer URL with macros, e.g. https://x.test/?s={sub1}", **URL_RULES
    )
    params: dict[str, str] = Field(
        default_factory=dict,
        max_length=64,
        description='Query parameters of a sample click, e.g. {"sub1": "abc"}.',
    )


class PreviewOut(BaseModel):
    url: str = Field(description="Where a click with these parameters would be sent.")
    unknown_macros: list[str] = Field(
        description="Macros neither built in nor in params: they would stay as written."
    )


class MacroOut(BaseModel):
    name: str
    description: str
