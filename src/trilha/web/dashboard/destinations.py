"""Destinations in the dashboard: add one (from a tracker's template), test it, switch it on and
off, re-send a time range; the notices of destinations that switched themselves off."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Response

from trilha.campaigns import list_campaigns, list_sources
from trilha.conversions.status import Status
from trilha.deliveries import destinations as store
from trilha.deliveries.build import Endpoints
from trilha.deliveries.destination import Destination
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import GOOGLE_ADS_SECRETS, Kind, Method
from trilha.deliveries.log import DeliveryFilter, earlier_sales, list_deliveries, resend_range
from trilha.deliveries.notices import list_notices, mark_read
from trilha.deliveries.postback import TEMPLATES, TRACKER_NAMES
from trilha.deliveries.send import Policy, Sent
from trilha.deliveries.trial import send_test
from trilha.deliveries.verify import refuse_private_address
from trilha.errors import InvalidInput
from trilha.web.auth import Db
from trilha.web.dashboard.pages import Form, InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

RECENT = 20  # deliveries shown on a destination's page
# The config fields each kind's form shows (credentials among them are password inputs).
CONFIG_FIELDS = {
    Kind.META_CAPI: ("pixel_id", "action_source", "refund_event", "test_event_code"),
    Kind.TIKTOK_EVENTS: ("pixel_code", "test_event_code"),
    Kind.GOOGLE_ADS: (
        "customer_id",
        "conversion_action",
        "login_customer_id",
        "client_id",
        "client_secret",
        "developer_token",
    ),
}
ALL_CONFIG_FIELDS = tuple(name for names in CONFIG_FIELDS.values() for name in names)


@router.get("/w/{workspace_id}/destinations")
async def destination_list(page: InWorkspace, conn: Db) -> Response:
    context = {
        "section": "destinations",
        "destinations": await store.list_destinations(conn, page.workspace),
        "notices": await list_notices(conn, page.workspace, unread_only=True),
        "templates": TRACKER_NAMES,
    }
    return render(page, "dashboard/destinations/list.html", context)


@router.get("/w/{workspace_id}/destinations/new")
async def new_destination(
    page: InWorkspace, conn: Db, kind: str = "postback", template: str = ""
) -> Response:
    page.require(Role.MEMBER)
    chosen = Kind(kind) if kind in {k.value for k in Kind} else Kind.POSTBACK
    values = {"kind": chosen.value, "url": TEMPLATES.get(template, ""), "method": "GET"}
    values["name"] = TRACKER_NAMES.get(template, "")
    return await _form(page, conn, values, {})


@router.post("/w/{workspace_id}/destinations")
async def add_destination(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    try:
        spec = _spec(form)
        await refuse_private_address(spec, allow_private=page.settings.delivery_allow_private)
        made = await store.create_destination(conn, page.workspace, spec, now=datetime.now(UTC))
    except (InvalidInput, ValueError) as exc:
        return await _form(page, conn, _values(form), _errors(exc), status_code=422)
    if made.kind is Kind.WEBHOOK and not form["secret"].strip():
        # The secret trilha made is shown this once, on the destination's own page.
        return await _form(page, conn, _stored(made), {}, made, signing_secret=made.secret)
    return redirect(page, _url(page, made.id), "destinations.created", name=made.name)


@router.get("/w/{workspace_id}/destinations/{destination_id}")
async def edit_destination(destination_id: str, page: InWorkspace, conn: Db) -> Response:
    found = await store.get_destination(conn, page.workspace, destination_id)
    return await _form(page, conn, _stored(found), {}, found)


@router.post("/w/{workspace_id}/destinations/{destination_id}")
async def save_destination(destination_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    found = await store.get_destination(conn, page.workspace, destination_id)
    form = await read_form(page.request)
    try:
        spec = _spec(form)
        await refuse_private_address(spec, allow_private=page.settings.delivery_allow_private)
        saved = await store.update_destination(
            conn, page.workspace, found.id, spec, now=datetime.now(UTC)
        )
    except (InvalidInput, ValueError) as exc:
        return await _form(page, conn, _values(form), _errors(exc), found, status_code=422)
    return redirect(page, _url(page, saved.id), "destinations.saved", name=saved.name)


@router.post("/w/{workspace_id}/destinations/{destination_id}/test")
async def test_destination(destination_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    found = await store.get_destination(conn, page.workspace, destination_id)
    sent = await send_test(
        found,
        page.workspace,
        policy=Policy.from_settings(page.settings),
        endpoints=Endpoints.from_settings(page.settings),
        now=datetime.now(UTC),
    )
    return await _form(page, conn, _stored(found), {}, found, sent=sent)


@router.post("/w/{workspace_id}/destinations/{destination_id}/status")
async def switch_destination(destination_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    now = datetime.now(UTC)
    if form["action"] == "activate":
        found = await store.activate_destination(conn, page.workspace, destination_id, now=now)
        return redirect(page, _url(page, found.id), "destinations.activated", name=found.name)
    found = await store.deactivate_destination(conn, page.workspace, destination_id, now=now)
    return redirect(page, _url(page, found.id), "destinations.deactivated", name=found.name)


@router.post("/w/{workspace_id}/destinations/{destination_id}/rotate-secret")
async def rotate_destination_secret(destination_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    try:
        rotated = await store.rotate_secret(
            conn, page.workspace, destination_id, now=datetime.now(UTC)
        )
    except InvalidInput as exc:
        found = await store.get_destination(conn, page.workspace, destination_id)
        return await _form(page, conn, _stored(found), field_errors(exc), found, status_code=422)
    return await _form(page, conn, _stored(rotated), {}, rotated, signing_secret=rotated.secret)


@router.post("/w/{workspace_id}/destinations/{destination_id}/resend")
async def resend_destination(destination_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    found = await store.get_destination(conn, page.workspace, destination_id)
    form = await read_form(page.request)
    try:
        since, until = _day(page, form["since"], "since"), _day(page, form["until"], "until")
        queued = await conn.run_sync(
            resend_range,
            page.workspace.id,
            found.id,
            since=since,
            until=until + timedelta(days=1),
            now=datetime.now(UTC),
        )
    except InvalidInput as exc:
        return await _form(page, conn, _stored(found), field_errors(exc), found, status_code=422)
    return redirect(page, _url(page, found.id), "destinations.resent", count=str(queued))


@router.post("/w/{workspace_id}/destinations/{destination_id}/delete")
async def delete_destination(destination_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    found = await store.get_destination(conn, page.workspace, destination_id)
    await store.delete_destination(conn, page.workspace, found.id)
    url = f"/w/{page.workspace.id}/destinations"
    return redirect(page, url, "destinations.deleted", name=found.name)


@router.post("/w/{workspace_id}/notices/{notice_id}/read")
async def read_notice(notice_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    await mark_read(conn, page.workspace, notice_id, now=datetime.now(UTC))
    return redirect(page, f"/w/{page.workspace.id}/destinations")


def _url(page: Page, destination_id: str) -> str:
    return f"/w/{page.workspace.id}/destinations/{destination_id}"


def _day(page: Page, value: str, field: str) -> datetime:
    """The start of a YYYY-MM-DD day on the workspace's clock."""
    try:
        day = datetime.strptime(value.strip(), "%Y-%m-%d").date()  # noqa: DTZ007 (a date only)
    except ValueError:
        raise InvalidInput({field: "a day, as YYYY-MM-DD"}) from None
    return datetime.combine(day, time(), tzinfo=ZoneInfo(page.workspace.timezone))


def _spec(form: Form) -> Spec:
    kind = Kind(form["kind"])
    config = {name: form[name].strip() for name in CONFIG_FIELDS.get(kind, ()) if form[name]}
    return Spec(
        name=form["name"],
        kind=kind,
        url=form["url"],
        method=Method(form["method"] or "GET"),
        event_types=tuple(n.strip() for n in form["event_types"].split(",") if n.strip()),
        statuses=tuple(Status(s) for s in form.getlist("statuses")),
        campaign_id=form["campaign_id"] or None,
        source_id=form["source_id"] or None,
        sub_id=form["sub_id"].strip() or None,
        secret=form["secret"].strip() or None,
        config=config,
        currency=form["currency"].strip() or None,
    )


def _errors(exc: InvalidInput | ValueError) -> dict[str, str]:
    if isinstance(exc, InvalidInput):
        return {name.removeprefix("config."): text for name, text in exc.fields.items()}
    return {"_form": str(exc)}


def _values(form: Form) -> dict[str, Any]:
    hidden = {"secret", *GOOGLE_ADS_SECRETS}
    values: dict[str, Any] = {name: form[name] for name in form.data if name not in hidden}
    values["statuses"] = form.getlist("statuses")
    return values


def _stored(destination: Destination) -> dict[str, Any]:
    return {
        "name": destination.name,
        "kind": destination.kind.value,
        "url": destination.url,
        "method": destination.method.value,
        "event_types": ", ".join(destination.event_types),
        "statuses": [s.value for s in destination.statuses],
        "campaign_id": destination.campaign_id or "",
        "source_id": destination.source_id or "",
        "sub_id": destination.sub_id or "",
        "currency": destination.currency or "",
        **{
            name: str(destination.config.get(name) or "")
            for name in ALL_CONFIG_FIELDS
            if name not in GOOGLE_ADS_SECRETS
        },
    }


async def _form(
    page: Page,
    conn: Db,
    values: dict[str, Any],
    errors: dict[str, str],
    destination: Destination | None = None,
    *,
    sent: Sent | None = None,
    signing_secret: str | None = None,
    status_code: int = 200,
) -> Response:
    recent: list[dict[str, Any]] = []
    resend: dict[str, str] = {}
    earlier = None
    if destination is not None:
        where = DeliveryFilter(destination_id=destination.id)
        recent = await list_deliveries(conn, page.workspace, where, limit=RECENT)
        if not recent:
            # Made after the workspace's first sales: it is offered them, days filled in.
            earlier = await earlier_sales(conn, page.workspace, destination.created_at)
        if earlier is not None:
            zone = ZoneInfo(page.workspace.timezone)
            resend = {
                "since": earlier.first.astimezone(zone).date().isoformat(),
                "until": earlier.last.astimezone(zone).date().isoformat(),
            }
    context = {
        "section": "destinations",
        "destination": destination,
        "values": values,
        "errors": errors,
        "known_fields": ["name", "url", "secret", "sub_id", *ALL_CONFIG_FIELDS],
        "kinds": [k.value for k in Kind],
        "statuses": [s.value for s in Status],
        "campaigns": await list_campaigns(conn, page.workspace),
        "sources": await list_sources(conn, page.workspace),
        "sent": sent,
        "signing_secret": signing_secret,
        "recent": recent,
        "earlier_sales": earlier,
        "resend_values": resend,
    }
    return render(page, "dashboard/destinations/form.html", context, status_code=status_code)
