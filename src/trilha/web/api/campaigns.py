"""/workspaces/{id}/campaigns: tracking links and the offers they send visitors to."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha import campaigns
from trilha.web.api.dependencies import AppSettings, InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import (
    AUTH_ERRORS,
    CONFLICT,
    NOT_FOUND,
    CampaignIn,
    CampaignOut,
    CampaignPatch,
)
from trilha.web.auth import Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/campaigns",
    tags=["campaigns"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the workspace's campaigns, newest first")
async def list_campaigns(
    membership: InWorkspace, conn: Db, settings: AppSettings
) -> list[CampaignOut]:
    found = await campaigns.list_campaigns(conn, membership.workspace)
    return [CampaignOut.of(campaign, settings.base_url) for campaign in found]


@router.post("", status_code=201, summary="Create a campaign", responses=CONFLICT)
async def create_campaign(
    body: CampaignIn, membership: InWorkspace, conn: Db, settings: AppSettings
) -> CampaignOut:
    membership.require(Role.MEMBER)
    campaign = await campaigns.create_campaign(
        conn,
        membership.workspace,
        name=body.name,
        slug=body.slug,
        host=body.host,
        offer_url=body.offer_url,
        source_id=body.source_id,
        merchant_id=body.merchant_id,
        status=body.status,
        fallback_url=body.fallback_url,
        now=datetime.now(UTC),
    )
    return CampaignOut.of(campaign, settings.base_url)


@router.get("/{campaign_id}", summary="A campaign")
async def get_campaign(
    campaign_id: str, membership: InWorkspace, conn: Db, settings: AppSettings
) -> CampaignOut:
    campaign = await campaigns.get_campaign(conn, membership.workspace, campaign_id)
    return CampaignOut.of(campaign, settings.base_url)


@router.patch(
    "/{campaign_id}",
    summary="Change a campaign; the next click sees the change",
    responses=CONFLICT,
)
async def update_campaign(
    campaign_id: str,
    body: CampaignPatch,
    membership: InWorkspace,
    conn: Db,
    settings: AppSettings,
) -> CampaignOut:
    membership.require(Role.MEMBER)
    campaign = await campaigns.update_campaign(
        conn,
        membership.workspace,
        campaign_id,
        now=datetime.now(UTC),
        **body.model_dump(exclude_unset=True),
    )
    return CampaignOut.of(campaign, settings.base_url)


@router.delete(
    "/{campaign_id}",
    status_code=204,
    summary="Delete a campaign that has no clicks (pause one that has)",
    responses=CONFLICT,
)
async def delete_campaign(campaign_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await campaigns.delete_campaign(conn, membership.workspace, campaign_id)
