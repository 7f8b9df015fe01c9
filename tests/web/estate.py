"""A workspace with one real row of every kind an API path names, made the real way where there
is one (a click through /r/{slug}, conversions from postbacks to /pb)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_domain, make_source, now
from tests.postbacks.shop import make_merchant
from tests.web.callers import Caller, make_member, make_owner
from tests.web.sales import click, postback
from trilha.accounts import create_api_key
from trilha.currencies import save_rate
from trilha.event_types import create_event_type
from trilha.invitations import invite
from trilha.reconciliation.reconcile import read_upload, reconcile
from trilha.workspaces import Role, Workspace

_serial = count(1)


@dataclass(frozen=True, slots=True)
class Estate:
    owner: Caller
    member: Caller  # of role member
    workspace: Workspace
    ids: dict[str, str]  # a path parameter's name -> the id of a real row behind it


async def build_estate(client: httpx.AsyncClient, db: AsyncEngine) -> Estate:
    serial = next(_serial)
    owner, workspace = await make_owner(db)
    member = await make_member(db, workspace, Role.MEMBER)
    async with db.begin() as conn:
        spare_key, _ = await create_api_key(conn, owner.user, name="spare", now=now())
        invited = await invite(
            conn,
            workspace,
            email=f"invited{serial}@example.com",
            role=Role.VIEWER,
            invited_by=owner.user,
            now=now(),
        )
        event_type = await create_event_type(
            conn,
            workspace.id,
            name="WEBINAR_SEAT",
            counts_as_conversion=True,
            counts_as_revenue=True,
            now=now(),
        )
    source = await make_source(db, workspace)
    domain = await make_domain(db, workspace, f"track{serial}.example.com")
    merchant = await make_merchant(db, workspace, preset="generic", key=f"loja-{serial}")
    campaign, click_id = await click(client, db, workspace)
    sale = await postback(client, workspace, click_id=click_id, txid="T1", payout="10,00")
    orphan = await postback(client, workspace, click_id="from-email", txid="T2")
    assert (sale["status"], orphan["status"]) == ("created", "orphan")
    export = read_upload("sales.csv", b"txid,status,value,date\nT1,approved,10,2026-12-01\n")
    async with db.begin() as conn:
        reconciliation_id = await conn.run_sync(
            reconcile, workspace, merchant.id, export, now=now()
        )
        rate, _ = await conn.run_sync(
            save_rate,
            workspace.id,
            "BRL",
            currency="ARS",
            day="2026-12-01",
            rate="0.005",
            now=now(),
        )
    return Estate(
        owner,
        member,
        workspace,
        {
            "workspace_id": workspace.id,
            "user_id": member.user.id,
            "key_id": spare_key.id,
            "invitation_id": invited.invitation.id,
            "event_type_id": event_type.id,
            "source_id": source.id,
            "domain_id": domain.id,
            "merchant_id": merchant.id,
            "campaign_id": campaign.id,
            "click_id": click_id,
            "conversion_id": orphan["conversion_id"],
            "postback_id": sale["postback_id"],
            "entry_id": sale["postback_id"],  # the dashboard's name for a postback log entry
            "reconciliation_id": reconciliation_id,
            "rate_id": rate.id,
            "day": "2026-12-01",  # a campaign's cost day
        },
    )
