"""/workspaces/{id}/destinations: where conversions are told onwards (postbacks to trackers and
traffic sources, signed webhooks, Meta's Conversions API)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha.deliveries import destinations
from trilha.deliveries.build import Endpoints
from trilha.deliveries.kinds import Kind
from trilha.deliveries.log import resend_range
from trilha.deliveries.postback import CONVERSION_MACROS, TEMPLATES
from trilha.deliveries.send import Policy
from trilha.deliveries.trial import send_test
from trilha.deliveries.verify import refuse_private_address
from trilha.web.api.delivery_schemas import (
    DestinationCreated,
    DestinationIn,
    DestinationOut,
    MacroOut,
    ResendIn,
    ResendOut,
    SentOut,
    TemplateOut,
    TemplatesOut,
)
from trilha.web.api.dependencies import AppSettings, InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND
from trilha.web.auth import ApiUser, Db
from trilha.workspaces import Role

router = APIRouter(
    route_class=ApiRoute,
    prefix="/workspaces/{workspace_id}/destinations",
    tags=["destinations"],
    responses=AUTH_ERRORS | NOT_FOUND,
)
templates_router = APIRouter(route_class=ApiRoute, tags=["destinations"], responses=AUTH_ERRORS)


@templates_router.get(
    "/destination-templates", summary="Ready postback URLs of trackers, and the conversion macros"
)
async def list_destination_templates(_user: ApiUser) -> TemplatesOut:
    return TemplatesOut(
        templates=[TemplateOut(name=name, url=url) for name, url in TEMPLATES.items()],
        conversion_macros=[MacroOut(name=n, description=d) for n, d in CONVERSION_MACROS.items()],
    )


@router.get("", summary="List the workspace's destinations")
async def list_destinations(membership: InWorkspace, conn: Db) -> list[DestinationOut]:
    found = await destinations.list_destinations(conn, membership.workspace)
    return [DestinationOut.of(d) for d in found]


@router.post(
    "",
    status_code=201,
    summary="Add a destination; it is verified before it sends",
    description="A postback or webhook URL on a private or loopback address is refused (422) "
    "unless the server runs with TRILHA_DELIVERY_ALLOW_PRIVATE=true.",
)
async def create_destination(
    body: DestinationIn, membership: InWorkspace, conn: Db, settings: AppSettings
) -> DestinationCreated:
    membership.require(Role.MEMBER)
    spec = body.spec()
    await refuse_private_address(spec, allow_private=settings.delivery_allow_private)
    made = await destinations.create_destination(
        conn, membership.workspace, spec, now=datetime.now(UTC)
    )
    shown = made.secret if made.kind is Kind.WEBHOOK and body.secret is None else None
    return DestinationCreated(**DestinationOut.of(made).model_dump(), signing_secret=shown)


@router.get("/{destination_id}", summary="A destination (its secret masked)")
async def get_destination(destination_id: str, membership: InWorkspace, conn: Db) -> DestinationOut:
    found = await destinations.get_destination(conn, membership.workspace, destination_id)
    return DestinationOut.of(found)


@router.put("/{destination_id}", summary="Change a destination; it is verified again")
async def update_destination(
    destination_id: str,
    body: DestinationIn,
    membership: InWorkspace,
    conn: Db,
    settings: AppSettings,
) -> DestinationOut:
    membership.require(Role.MEMBER)
    spec = body.spec()
    await refuse_private_address(spec, allow_private=settings.delivery_allow_private)
    changed = await destinations.update_destination(
        conn, membership.workspace, destination_id, spec, now=datetime.now(UTC)
    )
    return DestinationOut.of(changed)


@router.delete(
    "/{destination_id}", status_code=204, summary="Delete a destination and its delivery log"
)
async def delete_destination(destination_id: str, membership: InWorkspace, conn: Db) -> None:
    membership.require(Role.MEMBER)
    await destinations.delete_destination(conn, membership.workspace, destination_id)


@router.post("/{destination_id}/activate", summary="Switch a destination on (verified again)")
async def activate_destination(
    destination_id: str, membership: InWorkspace, conn: Db
) -> DestinationOut:
    membership.require(Role.MEMBER)
    changed = await destinations.activate_destination(
        conn, membership.workspace, destination_id, now=datetime.now(UTC)
    )
    return DestinationOut.of(changed)


@router.post("/{destination_id}/deactivate", summary="Switch a destination off")
async def deactivate_destination(
    destination_id: str, membership: InWorkspace, conn: Db
) -> DestinationOut:
    membership.require(Role.MEMBER)
    changed = await destinations.deactivate_destination(
        conn, membership.workspace, destination_id, now=datetime.now(UTC)
    )
    return DestinationOut.of(changed)


@router.post(
    "/{destination_id}/test",
    summary="Send a sample sale to the destination now; the answer is shown, nothing stored",
)
async def test_destination(
    destination_id: str, membership: InWorkspace, conn: Db, settings: AppSettings
) -> SentOut:
    membership.require(Role.MEMBER)
    found = await destinations.get_destination(conn, membership.workspace, destination_id)
    sent = await send_test(
        found,
        membership.workspace,
        policy=Policy.from_settings(settings),
        endpoints=Endpoints.from_settings(settings),
        now=datetime.now(UTC),
    )
    return SentOut.of(sent)


@router.post(
    "/{destination_id}/rotate-secret",
    summary="A new signing secret for a webhook; the old one still signs for 24 hours",
)
async def rotate_destination_secret(
    destination_id: str, membership: InWorkspace, conn: Db
) -> DestinationCreated:
    membership.require(Role.MEMBER)
    rotated = await destinations.rotate_secret(
        conn, membership.workspace, destination_id, now=datetime.now(UTC)
    )
    return DestinationCreated(
        **DestinationOut.of(rotated).model_dump(), signing_secret=rotated.secret
    )


@router.post(
    "/{destination_id}/resend",
    summary="Send the destination every conversion of a time range it wants (again)",
)
async def resend_destination(
    destination_id: str, body: ResendIn, membership: InWorkspace, conn: Db
) -> ResendOut:
    membership.require(Role.MEMBER)
    queued = await conn.run_sync(
        resend_range,
        membership.workspace.id,
        destination_id,
        since=body.since,
        until=body.until,
        now=datetime.now(UTC),
    )
    return ResendOut(queued=queued)
