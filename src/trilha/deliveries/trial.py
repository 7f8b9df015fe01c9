""" "Send test": a destination's request for a sample sale, made once and shown, never stored.

The sample is a SALE of 97.00 in the workspace's currency, approved now, on a click whose sub1
is ``test`` (its gclid ``TEST-GCLID``, its fbclid ``TEST-FBCLID``); Meta gets it with the
destination's test event code, if it has one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from trilha.conversions.status import Status
from trilha.deliveries.build import Endpoints
from trilha.deliveries.destination import Destination
from trilha.deliveries.jobs import Job
from trilha.deliveries.send import Policy, Sent, new_client
from trilha.deliveries.worker import attempt
from trilha.links import Link
from trilha.workspaces import Workspace


def sample_job(destination: Destination, workspace: Workspace, *, now: datetime) -> Job:
    conversion: dict[str, Any] = {
        "id": "test-conversion",
        "workspace_id": workspace.id,
        "event_type": "SALE",
        "status": Status.APPROVED,
        "value_minor": 9700,
        "currency": workspace.currency,
        "txid": "TEST-1",
        "click_id": "test-click",
        "campaign_id": "test-campaign",
        "source_id": None,
        "created_at": now,
        "is_test": True,
        "buyer_email_sha256": None,
        "buyer_phone_sha256": None,
    }
    click: dict[str, Any] = {
        "id": "test-click",
        "created_at": now,
        "ip": "203.0.113.7",
        "user_agent": "Mozilla/5.0 (trilha test)",
        "device_type": "desktop",
        "os": "Linux",
        "browser": "Firefox",
        "country": "BR",
        "referrer": "",
        "sub1": "test",
        "fbclid": "TEST-FBCLID",
        "gclid": "TEST-GCLID",
        "params": {},
    }
    link = Link(
        campaign_id="test-campaign",
        workspace_id=workspace.id,
        name="Test campaign",
        slug="test",
        offer_url="",
        source_id=None,
        source_name="",
        source_params=(),
        timezone=workspace.timezone,
    )
    return Job(
        delivery_id="test-delivery",
        attempts=0,
        lease_until=None,
        created_at=now,
        conversion_status=Status.APPROVED,
        destination=destination,
        conversion=conversion,
        click=click,
        link=link,
    )


async def send_test(
    destination: Destination,
    workspace: Workspace,
    *,
    policy: Policy,
    endpoints: Endpoints,
    now: datetime,
) -> Sent:
    async with new_client(policy) as client:
        return await attempt(client, sample_job(destination, workspace, now=now), endpoints, policy)
