"""Destinations: where a workspace's conversions are told onwards, and which ones each wants."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.status import Status
from trilha.db.schema import campaigns, destinations, traffic_sources
from trilha.deliveries import google_ads, meta, tiktok
from trilha.deliveries.destination import Destination, destination_of
from trilha.deliveries.kinds import DestinationStatus, Kind, Method
from trilha.deliveries.postback import check_template
from trilha.deliveries.problems import SWITCHED_OFF_BY_USER
from trilha.errors import InvalidInput, NotFound
from trilha.ids import new_id
from trilha.money import CURRENCIES
from trilha.validation import require_http_url, require_text
from trilha.workspaces import Workspace

NAME_MAX = 120
ROTATION_OVERLAP = timedelta(hours=24)  # a rotated webhook secret still signs this long
SUB_ID_MAX = 200
EVENT_TYPE_MAX = 40
MAX_FILTERS = 20


@dataclass(frozen=True, slots=True)
class Spec:
    """What a user sets on a destination."""

    name: str
    kind: Kind
    url: str = ""
    method: Method = Method.GET
    event_types: tuple[str, ...] = ()  # none: every event type
    statuses: tuple[Status, ...] = ()  # none: every status
    campaign_id: str | None = None
    source_id: str | None = None
    sub_id: str | None = None  # matched against the click's sub1
    secret: str | None = field(default=None, repr=False)  # None on an edit: keep the stored one
    config: dict[str, Any] = field(default_factory=dict)
    currency: str | None = None  # values sent in it (trilha.currencies); None: the conversion's


def new_webhook_secret() -> str:
    """A Standard Webhooks signing secret: ``whsec_`` and 24 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def checked(
    spec: Spec, *, stored_secret: str | None = None, stored_config: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The spec's columns, each value checked; InvalidInput naming the field otherwise."""
    secret = spec.secret if spec.secret is not None else stored_secret
    url, method, config = spec.url, spec.method, dict(spec.config)
    if spec.kind is Kind.POSTBACK:
        url = check_template(url)
    elif spec.kind is Kind.WEBHOOK:
        url, method = require_http_url(url, "url"), Method.POST
        if "{" in url:
            raise InvalidInput({"url": "a webhook URL takes no macros"})
        secret = secret or new_webhook_secret()
        # A webhook's only config is its rotation's overlap, which an edit keeps.
        config = {k: v for k, v in (stored_config or {}).items() if k.startswith("previous_")}
    elif spec.kind is Kind.META_CAPI:
        url, method, config = "", Method.POST, meta.check_config(config)
        if not secret:
            raise InvalidInput({"secret": "Meta's access token is required"})
    elif spec.kind is Kind.TIKTOK_EVENTS:
        url, method, config = "", Method.POST, tiktok.check_config(config)
        if not secret:
            raise InvalidInput({"secret": "the Events API access token is required"})
    else:
        url, method = "", Method.POST
        config = google_ads.check_config(config, stored_config)
        if not secret:
            raise InvalidInput({"secret": "the OAuth refresh token is required"})
    return {
        "name": require_text(spec.name, "name", max_length=NAME_MAX),
        "kind": spec.kind,
        "url": url,
        "method": method,
        "event_types": _names(spec.event_types),
        "statuses": list(dict.fromkeys(spec.statuses)),
        "campaign_id": spec.campaign_id,
        "source_id": spec.source_id,
        "sub_id": require_text(spec.sub_id, "sub_id", max_length=SUB_ID_MAX)
        if spec.sub_id
        else None,
        "secret": require_text(secret, "secret", max_length=500) if secret else None,
        "config": config,
        "currency": _currency(spec.currency),
    }


def _currency(code: str | None) -> str | None:
    if not code or not code.strip():
        return None
    code = code.strip().upper()
    if code not in CURRENCIES:
        raise InvalidInput({"currency": "must be an ISO 4217 code such as USD"})
    return code


def _names(event_types: Sequence[str]) -> list[str]:
    if len(event_types) > MAX_FILTERS:
        raise InvalidInput({"event_types": f"at most {MAX_FILTERS}"})
    return list(
        dict.fromkeys(
            require_text(n, "event_types", max_length=EVENT_TYPE_MAX).upper() for n in event_types
        )
    )


async def _check_refs(conn: AsyncConnection, workspace: Workspace, columns: dict[str, Any]) -> None:
    for name, table in (("campaign_id", campaigns), ("source_id", traffic_sources)):
        if columns[name] is None:
            continue
        found = await conn.scalar(
            select(table.c.id).where(
                table.c.id == columns[name], table.c.workspace_id == workspace.id
            )
        )
        if found is None:
            raise InvalidInput({name: "no such one in this workspace"})


async def create_destination(
    conn: AsyncConnection, workspace: Workspace, spec: Spec, *, now: datetime
) -> Destination:
    """A new destination, ``verifying`` until the worker has checked its address."""
    columns = checked(spec)
    await _check_refs(conn, workspace, columns)
    destination_id = new_id()
    await conn.execute(
        destinations.insert().values(
            id=destination_id,
            workspace_id=workspace.id,
            status=DestinationStatus.VERIFYING,
            created_at=now,
            updated_at=now,
            **columns,
        )
    )
    return await get_destination(conn, workspace, destination_id)


async def list_destinations(conn: AsyncConnection, workspace: Workspace) -> list[Destination]:
    rows = await conn.execute(
        select(destinations)
        .where(destinations.c.workspace_id == workspace.id)
        .order_by(destinations.c.name, destinations.c.id)
    )
    return [destination_of(row) for row in rows]


async def get_destination(
    conn: AsyncConnection, workspace: Workspace, destination_id: str
) -> Destination:
    row = (
        await conn.execute(
            select(destinations).where(
                destinations.c.id == destination_id, destinations.c.workspace_id == workspace.id
            )
        )
    ).first()
    if row is None:
        raise NotFound("no such destination")
    return destination_of(row)


async def update_destination(
    conn: AsyncConnection, workspace: Workspace, destination_id: str, spec: Spec, *, now: datetime
) -> Destination:
    """Replace what the user set; the destination is checked again before it sends."""
    current = await get_destination(conn, workspace, destination_id)
    same_kind = spec.kind is current.kind
    columns = checked(
        spec,
        stored_secret=current.secret if same_kind else None,
        stored_config=current.config if same_kind else None,
    )
    await _check_refs(conn, workspace, columns)
    await conn.execute(
        update(destinations)
        .where(destinations.c.id == destination_id)
        .values(**columns, **_reverify(now))
    )
    return await get_destination(conn, workspace, destination_id)


async def activate_destination(
    conn: AsyncConnection, workspace: Workspace, destination_id: str, *, now: datetime
) -> Destination:
    """Switch a destination back on: it is verified again first."""
    await get_destination(conn, workspace, destination_id)
    await conn.execute(
        update(destinations).where(destinations.c.id == destination_id).values(**_reverify(now))
    )
    return await get_destination(conn, workspace, destination_id)


async def deactivate_destination(
    conn: AsyncConnection, workspace: Workspace, destination_id: str, *, now: datetime
) -> Destination:
    await get_destination(conn, workspace, destination_id)
    await conn.execute(
        update(destinations)
        .where(destinations.c.id == destination_id)
        .values(
            status=DestinationStatus.INACTIVE,
            status_reason=SWITCHED_OFF_BY_USER.say(),
            updated_at=now,
        )
    )
    return await get_destination(conn, workspace, destination_id)


async def rotate_secret(
    conn: AsyncConnection, workspace: Workspace, destination_id: str, *, now: datetime
) -> Destination:
    """A new signing secret for a webhook; for ``ROTATION_OVERLAP`` its messages are signed
    with the old one too, so receivers can switch without losing any."""
    current = await get_destination(conn, workspace, destination_id)
    if current.kind is not Kind.WEBHOOK:
        raise InvalidInput({"kind": "only webhooks have a signing secret to rotate"})
    config = {
        **current.config,
        "previous_secret": current.secret,
        "previous_until": (now + ROTATION_OVERLAP).isoformat(),
    }
    await conn.execute(
        update(destinations)
        .where(destinations.c.id == destination_id)
        .values(secret=new_webhook_secret(), config=config, updated_at=now)
    )
    return await get_destination(conn, workspace, destination_id)


async def delete_destination(
    conn: AsyncConnection, workspace: Workspace, destination_id: str
) -> None:
    """Delete a destination with its deliveries and their attempts."""
    await get_destination(conn, workspace, destination_id)
    await conn.execute(delete(destinations).where(destinations.c.id == destination_id))


def _reverify(now: datetime) -> dict[str, Any]:
    return {
        "status": DestinationStatus.VERIFYING,
        "status_reason": "",
        "consecutive_failures": 0,
        "failing_since": None,
        "unanswered": 0,
        "paused_until": None,
        "updated_at": now,
    }
