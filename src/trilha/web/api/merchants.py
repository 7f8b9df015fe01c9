"""/workspaces/{id}/merchants: sales-platform accounts, their mapping, and test postbacks."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Request

from trilha import merchants
from trilha.postbacks import trial
from trilha.postbacks.platforms import PRESETS
from trilha.settings import Settings
from trilha.visitors import client_ip
from trilha.web.api.dependencies import AppSettings, InWorkspace
from trilha.web.api.postback_schemas import (
    MerchantDetail,
    MerchantIn,
    MerchantOut,
    MerchantPatch,
    TrialIn,
    TrialOut,
)
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, CONFLICT, NOT_FOUND
from trilha.web.auth import Db
from trilha.workspaces import Membership, Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/merchants",
    tags=["merchants"],
    responses=AUTH_ERRORS | NOT_FOUND,
)


@router.get("", summary="List the workspace's merchants, by name")
async def list_merchants(membership: InWorkspace, conn: Db) -> list[MerchantOut]:
    found = await merchants.list_merchants(conn, membership.workspace.id)
    return [MerchantOut.of(merchant) for merchant in found]


@router.post(
    "",
    status_code=201,
    summary="Create a merchant from a preset; the answer holds its postback URL",
    responses=CONFLICT,
)
async def create_merchant(
    body: MerchantIn, membership: InWorkspace, conn: Db, settings: AppSettings
) -> MerchantDetail:
    membership.require(Role.MEMBER)
    merchant = await merchants.create_merchant(
        conn, membership.workspace.id, now=datetime.now(UTC), **body.model_dump(mode="json")
    )
    return _detail(merchant, membership, settings)


@router.get("/{merchant_id}", summary="A merchant, with its postback URL and setup steps")
async def get_merchant(
    merchant_id: str, membership: InWorkspace, conn: Db, settings: AppSettings
) -> MerchantDetail:
    merchant = await merchants.get_merchant(conn, membership.workspace.id, merchant_id)
    return _detail(merchant, membership, settings)


def _detail(
    merchant: merchants.MerchantRow, membership: Membership, settings: Settings
) -> MerchantDetail:
    """The merchant with its setup steps, and its postback URL (which holds the workspace's
    token) for members and owners."""
    can_see_token = membership.role.allows(Role.MEMBER)
    return MerchantDetail(
        **MerchantOut.of(merchant).model_dump(),
        postback_url=(
            merchant.postback_url(settings.base_url, membership.workspace.postback_token)
            if can_see_token
            else None
        ),
        setup=PRESETS[merchant.preset].setup,
    )


@router.patch(
    "/{merchant_id}",
    summary="Change a merchant's mapping; the next postback sees it",
    responses=CONFLICT,
)
async def update_merchant(
    merchant_id: str, body: MerchantPatch, membership: InWorkspace, conn: Db
) -> MerchantOut:
    membership.require(Role.MEMBER)
    merchant = await merchants.update_merchant(
        conn,
        membership.workspace.id,
        merchant_id,
        now=datetime.now(UTC),
        **body.model_dump(mode="json", exclude_unset=True),
    )
    return MerchantOut.of(merchant)


@router.delete(
    "/{merchant_id}",
    status_code=204,
    summary="Delete a merchant; its conversions and log entries stay",
)
async def delete_merchant(merchant_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await merchants.delete_merchant(conn, membership.workspace.id, merchant_id)


@router.post(
    "/{merchant_id}/test",
    summary="Send a sample postback shaped like the platform's through the real pipeline; "
    "it is logged and its conversion stored",
)
async def send_test_postback(
    merchant_id: str,
    body: TrialIn,
    request: Request,
    membership: InWorkspace,
    conn: Db,
    settings: AppSettings,
) -> TrialOut:
    membership.require(Role.MEMBER)
    peer = request.client.host if request.client else "0.0.0.0"  # noqa: S104 -- unknown peer
    sent = await trial.send_test_postback(
        conn,
        membership.workspace,
        merchant_id,
        trial.TrialSale(**body.model_dump()),
        source_ip=client_ip(peer, request.headers.get("x-forwarded-for"), settings.trusted_proxies),
        now=datetime.now(UTC),
    )
    return TrialOut.of(sent)
