"""The four steps that make a workspace track its first sale with profit: a campaign, a sales
platform (merchant) whose postback URL is pasted at the platform, a cost, and a destination
that is told about each sale. Each step is done when the workspace holds what it makes."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Table, exists, select
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.db.schema import campaigns, cost_days, cost_models, destinations, merchants


@dataclass(frozen=True, slots=True)
class FirstSteps:
    campaign: bool
    merchant: bool
    cost: bool
    destination: bool

    @property
    def done(self) -> bool:
        return self.campaign and self.merchant and self.cost and self.destination


async def first_steps(conn: AsyncConnection, workspace_id: str) -> FirstSteps:
    async def any_in(table: Table) -> bool:
        query = select(exists().where(table.c.workspace_id == workspace_id))
        return bool(await conn.scalar(query))

    return FirstSteps(
        campaign=await any_in(campaigns),
        merchant=await any_in(merchants),
        cost=await any_in(cost_models) or await any_in(cost_days),
        destination=await any_in(destinations),
    )
