"""/workspaces/{id}/rates: the workspace's own exchange rates, for currencies the ECB's reference
rates lack (or to use its own); conversions waiting for a rate are converted when one is added."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from trilha.currencies import MAX_RATE, Rate, delete_rate, list_rates, save_rate
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, Input, checked
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/rates",
    tags=["currencies"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


class RateIn(Input):
    currency: str = checked(
        description="ISO 4217 code, e.g. `ARS`.", pattern=r"^\s*[A-Za-z]{3}\s*$"
    )
    day: str = checked(
        description="From this day on (until a later rate of the currency), `YYYY-MM-DD`.",
        format="date",
    )
    rate: Decimal = checked(
        description="One unit of `currency` in the workspace's currency, e.g. `0.0055`.",
        exclusiveMinimum=0,
        maximum=float(MAX_RATE),
    )


class RateOut(BaseModel):
    id: str
    currency: str
    to_currency: str = Field(description="The workspace's currency when the rate was entered.")
    day: date
    rate: Decimal

    @classmethod
    def of(cls, rate: Rate) -> RateOut:
        return cls(
            id=rate.id,
            currency=rate.currency,
            to_currency=rate.to_currency,
            day=rate.day,
            rate=rate.rate,
        )


class RatesOut(BaseModel):
    rates: list[RateOut] = Field(description="By currency, newest day first.")


class SavedRateOut(BaseModel):
    rate: RateOut
    converted: int = Field(description="Conversions that waited for a rate and now have one.")


@router.get("", summary="The workspace's exchange rates")
async def get_rates(membership: InWorkspace, conn: Db) -> RatesOut:
    workspace = membership.workspace
    rates = await conn.run_sync(list_rates, workspace.id, workspace.currency)
    return RatesOut(rates=[RateOut.of(rate) for rate in rates])


@router.put("", summary="Add or change the rate of a currency from a day on")
async def put_rate(body: RateIn, membership: InWorkspace, conn: Db) -> SavedRateOut:
    membership.require(Role.MEMBER)
    workspace = membership.workspace
    rate, converted = await conn.run_sync(
        save_rate,
        workspace.id,
        workspace.currency,
        currency=body.currency,
        day=body.day,
        rate=body.rate,
        now=datetime.now(UTC),
    )
    return SavedRateOut(rate=RateOut.of(rate), converted=converted)


@router.delete("/{rate_id}", status_code=204, summary="Delete a rate (converted values stay)")
async def remove_rate(rate_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await conn.run_sync(delete_rate, membership.workspace.id, rate_id)
