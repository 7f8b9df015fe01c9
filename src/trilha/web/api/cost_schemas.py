"""What the costs API reads and answers: amounts as decimal strings in the workspace currency."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pydantic import BaseModel, Field

from trilha.costs.days import MAX_IMPRESSIONS, CostDay
from trilha.costs.models import MAX_EVENT_TYPES, CostModel, CostModelKind
from trilha.costs.units import cost_text
from trilha.web.api.schemas import CURRENCY_RULES, Input, checked

AMOUNT_RULES = {"maxLength": 32, "pattern": r"^\s*R?\$?\s*[0-9][0-9.,]*\s*$"}


class CostModelIn(Input):
    model: CostModelKind
    starts_on: date | None = Field(
        None, description="The first day it applies to; today (the workspace's) if left out."
    )
    currency: str | None = checked(
        None,
        description="The workspace's currency if left out; no other is accepted yet.",
        **CURRENCY_RULES,
    )
    amount: str | None = checked(
        None,
        description="cpc, cpuc, cpa: per click, unique click or conversion; cpm: per thousand "
        "impressions. `0.05`, `0,05` and `1.234,56` are read alike.",
        **AMOUNT_RULES,
    )
    percent: str | None = checked(
        None,
        description="revshare: the percent of approved revenue, e.g. `30` or `33,33`.",
        **AMOUNT_RULES,
    )
    counts_bots: bool = Field(False, description="cpc: also pay for clicks flagged as bots.")
    event_types: list[str] = Field(
        [], max_length=MAX_EVENT_TYPES, description="cpa: the event types paid for."
    )


class CostModelOut(BaseModel):
    model: CostModelKind
    starts_on: date
    currency: str
    amount: str | None = Field(description="Per click, unique click, conversion or thousand.")
    percent: str | None = Field(description="revshare's percent.")
    counts_bots: bool
    event_types: list[str]

    @classmethod
    def of(cls, version: CostModel) -> CostModelOut:
        is_share = version.model is CostModelKind.REVSHARE
        is_priced = version.model not in (CostModelKind.MANUAL, CostModelKind.CLICK_URL)
        return cls(
            model=version.model,
            starts_on=version.starts_on,
            currency=version.currency,
            amount=cost_text(version.rate, version.currency)
            if is_priced and not is_share
            else None,
            percent=str(Decimal(version.rate).scaleb(-2)) if is_share else None,
            counts_bots=version.counts_bots,
            event_types=list(version.event_types),
        )


class CostModelsOut(BaseModel):
    current: CostModelOut | None = Field(description="The version in force today, if any.")
    history: list[CostModelOut] = Field(description="Every version, oldest first.")


class CostDayIn(Input):
    cost: str | None = checked(
        None,
        description="What the campaign cost that day; it replaces the model's estimate.",
        **AMOUNT_RULES,
    )
    impressions: int | None = checked(
        None,
        description="The day's impressions, priced by the cpm model.",
        minimum=0,
        maximum=MAX_IMPRESSIONS,
    )
    source_id: str | None = checked(
        None,
        description="One traffic source's cost; the whole campaign's if left out.",
        maxLength=32,
    )
    currency: str | None = checked(None, **CURRENCY_RULES)


class CostDayOut(BaseModel):
    day: date
    source_id: str | None
    currency: str
    cost: str | None
    impressions: int | None

    @classmethod
    def of(cls, stored: CostDay) -> CostDayOut:
        entry = stored.entry
        return cls(
            day=entry.day,
            source_id=entry.source_id,
            currency=stored.currency,
            cost=None if entry.cost is None else cost_text(entry.cost, stored.currency),
            impressions=entry.impressions,
        )


class CostDaysOut(BaseModel):
    days: list[CostDayOut] = Field(description="Newest first.")
