"""A campaign's cost model and its history: each version applies from its first day on, so
changing the model never rewrites the days before the change."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.campaigns import get_campaign
from trilha.costs.units import PER_THOUSAND, parse_cost, parse_percent
from trilha.db.schema import cost_models
from trilha.errors import InvalidInput
from trilha.event_types import list_event_types
from trilha.ids import new_id
from trilha.money import AmountError, check_currency
from trilha.workspaces import Workspace

MAX_EVENT_TYPES = 20


class CostModelKind(StrEnum):
    CPC = "cpc"  # per click; bot clicks excluded unless counts_bots
    CPUC = "cpuc"  # per unique click
    CPM = "cpm"  # per thousand impressions, entered or imported per day
    CPA = "cpa"  # per approved conversion of the chosen event types
    REVSHARE = "revshare"  # a percent of the approved revenue
    CLICK_URL = "click_url"  # what each click's URL says it cost (?cost=0.05)
    MANUAL = "manual"  # only the costs entered per day


PRICED = frozenset({CostModelKind.CPC, CostModelKind.CPUC, CostModelKind.CPM, CostModelKind.CPA})


@dataclass(frozen=True, slots=True)
class CostModel:
    """rate: cost units per click, unique click, conversion or thousand impressions; for
    revshare, basis points (hundredths of a percent); 0 for click_url and manual."""

    campaign_id: str
    starts_on: date
    model: CostModelKind
    currency: str
    rate: int
    counts_bots: bool
    event_types: tuple[str, ...]
    created_at: datetime


def model_on(history: Sequence[CostModel], day: date) -> CostModel | None:
    """The version in force on ``day``: the latest starting on or before it (history sorted).

    >>> from datetime import UTC
    >>> v = [CostModel("c", date(2026, 3, d), CostModelKind.CPC, "BRL", d, False, (),
    ...                datetime(2026, 1, 1, tzinfo=UTC)) for d in (1, 10)]
    >>> [getattr(model_on(v, date(2026, 3, d)), "rate", None) for d in (1, 9, 10, 28)]
    [1, 1, 10, 10]
    >>> model_on(v, date(2026, 2, 28)) is None
    True
    """
    found = None
    for version in history:
        if version.starts_on > day:
            break
        found = version
    return found


def check_cost_currency(currency: str, workspace: Workspace) -> str:
    """The cost's currency, which must be the workspace's: reports never mix currencies, and
    costs are not converted."""
    try:
        code = check_currency(currency)
    except AmountError as error:
        raise InvalidInput({"currency": str(error)}) from None
    if code != workspace.currency:
        raise InvalidInput(
            {
                "currency": f"costs in {code} cannot be converted to the workspace's currency "
                f"({workspace.currency}); enter them in {workspace.currency}"
            }
        )
    return code


async def set_cost_model(
    conn: AsyncConnection, workspace: Workspace, model: CostModel
) -> CostModel:
    """Make ``model`` the campaign's from its first day on, replacing a version that starts
    on the same day."""
    await get_campaign(conn, workspace, model.campaign_id)
    check_cost_currency(model.currency, workspace)
    await _check_event_types(conn, workspace, model)
    c = cost_models.c
    await conn.execute(
        delete(cost_models).where(
            c.campaign_id == model.campaign_id, c.starts_on == model.starts_on
        )
    )
    await conn.execute(
        cost_models.insert().values(
            id=new_id(),
            workspace_id=workspace.id,
            campaign_id=model.campaign_id,
            starts_on=model.starts_on,
            model=model.model.value,
            currency=model.currency,
            rate=model.rate,
            counts_bots=model.counts_bots,
            event_types=list(model.event_types),
            created_at=model.created_at,
        )
    )
    return model


async def _check_event_types(conn: AsyncConnection, workspace: Workspace, model: CostModel) -> None:
    if model.model is not CostModelKind.CPA:
        return
    if not model.event_types or len(model.event_types) > MAX_EVENT_TYPES:
        raise InvalidInput({"event_types": f"CPA needs 1 to {MAX_EVENT_TYPES} event types"})
    known = {t.name for t in await list_event_types(conn, workspace.id)}
    unknown = [name for name in model.event_types if name not in known]
    if unknown:
        raise InvalidInput({"event_types": f"no such event type: {', '.join(unknown)[:200]}"})


async def cost_history(
    conn: AsyncConnection, workspace: Workspace, campaign_id: str
) -> list[CostModel]:
    """The campaign's cost model versions, oldest first."""
    await get_campaign(conn, workspace, campaign_id)
    c = cost_models.c
    rows = await conn.execute(
        select(cost_models).where(c.campaign_id == campaign_id).order_by(c.starts_on)
    )
    return [cost_model_of(row) for row in rows]


def cost_model_of(row: object) -> CostModel:
    """A version from its stored row."""
    values = {name: getattr(row, name) for name in CostModel.__dataclass_fields__}
    values["model"] = CostModelKind(values["model"])
    values["event_types"] = tuple(values["event_types"])
    return CostModel(**values)


def new_cost_model(
    campaign_id: str,
    *,
    starts_on: date,
    model: CostModelKind,
    currency: str,
    amount: str | None = None,
    percent: str | None = None,
    counts_bots: bool = False,
    event_types: Sequence[str] = (),
    now: datetime,
) -> CostModel:
    """A version from what a user typed: ``amount`` for the priced models (per click, unique
    click, conversion, or thousand impressions), ``percent`` for revshare, neither otherwise."""
    code = currency.strip().upper()
    rate = 0
    try:
        if model in PRICED:
            if amount is None:
                raise InvalidInput({"amount": f"the {model.value} model needs an amount"})
            rate = parse_cost(amount, code)
            if model is CostModelKind.CPM and rate % PER_THOUSAND:
                raise InvalidInput({"amount": "a CPM has at most 3 decimal places more than cents"})
        elif model is CostModelKind.REVSHARE:
            if percent is None:
                raise InvalidInput({"percent": "the revshare model needs a percent"})
            rate = parse_percent(percent)
    except AmountError as error:
        field = "percent" if model is CostModelKind.REVSHARE else "amount"
        raise InvalidInput({field: str(error)}) from None
    return CostModel(
        campaign_id=campaign_id,
        starts_on=starts_on,
        model=model,
        currency=code,
        rate=rate,
        counts_bots=counts_bots and model is CostModelKind.CPC,
        event_types=tuple(event_types) if model is CostModelKind.CPA else (),
        created_at=now,
    )
