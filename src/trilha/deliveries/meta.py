"""Meta's Conversions API: a sale (or, if the user asks, a refund) as a server event.

Request: POST {graph}/{version}/{pixel_id}/events with ``{"data": [event], "access_token": ...}``
(the token in the body keeps it out of URLs and logs). Events older than 7 days are refused by
Meta, so they are skipped here.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any, Final

from trilha.conversions.status import Status
from trilha.deliveries.jobs import Job, OutboundRequest, Skip
from trilha.deliveries.problems import NOT_TOLD, TOO_OLD_FOR_META
from trilha.errors import InvalidInput

MAX_AGE: Final = timedelta(days=7)
DEFAULT_EVENT_NAMES: Final = {"SALE": "Purchase", "LEAD": "Lead", "SIGNUP": "CompleteRegistration"}
ACTION_SOURCES: Final = frozenset(
    {"website", "app", "email", "phone_call", "chat", "physical_store", "system_generated", "other"}
)
_EVENT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,49}$")
REVERSALS: Final = frozenset({Status.REFUNDED, Status.CHARGEBACK})


def check_config(config: dict[str, Any]) -> dict[str, Any]:
    """pixel_id (required), action_source, event_names, refund_event, test_event_code.

    >>> check_config({"pixel_id": "123"})["action_source"]
    'website'
    """
    pixel_id = str(config.get("pixel_id") or "")
    if not pixel_id.isdigit() or len(pixel_id) > 30:
        raise InvalidInput({"config.pixel_id": "the pixel (dataset) id, digits only, is required"})
    action_source = str(config.get("action_source") or "website")
    if action_source not in ACTION_SOURCES:
        raise InvalidInput({"config.action_source": f"one of {', '.join(sorted(ACTION_SOURCES))}"})
    names = config.get("event_names") or {}
    if not isinstance(names, dict) or not all(
        isinstance(v, str) and _EVENT_NAME.match(v) for v in names.values()
    ):
        raise InvalidInput({"config.event_names": "event type → Meta event name, e.g. Purchase"})
    refund_event = config.get("refund_event") or None
    if refund_event is not None and not (
        isinstance(refund_event, str) and _EVENT_NAME.match(refund_event)
    ):
        raise InvalidInput({"config.refund_event": "a custom event name, e.g. Refund"})
    test_code = config.get("test_event_code") or None
    if test_code is not None and not (isinstance(test_code, str) and len(test_code) <= 40):
        raise InvalidInput({"config.test_event_code": "Meta's test event code, e.g. TEST1234"})
    return {
        "pixel_id": pixel_id,
        "action_source": action_source,
        "event_names": {str(k).upper(): v for k, v in names.items()},
        "refund_event": refund_event,
        "test_event_code": test_code,
    }


def build_meta(job: Job, *, base_url: str, now: datetime) -> OutboundRequest | Skip:
    config = job.destination.config
    status = job.conversion_status
    if status is Status.APPROVED:
        event_type = job.conversion["event_type"]
        names = {**DEFAULT_EVENT_NAMES, **config["event_names"]}
        name, event_id, at = names.get(event_type, event_type), job.conversion["id"], _first(job)
    elif status in REVERSALS and config.get("refund_event"):
        name, event_id, at = (
            config["refund_event"],
            f"{job.conversion['id']}:{status}",
            job.created_at,
        )
    else:
        return Skip(NOT_TOLD.say(platform="Meta", status=status))
    if now - at > MAX_AGE:
        return Skip(TOO_OLD_FOR_META.say())
    event = {
        "event_name": name,
        "event_time": int(at.timestamp()),
        "event_id": event_id,
        "action_source": config["action_source"],
        "user_data": _user_data(job),
        "custom_data": {"value": float(job.value), "currency": job.currency},
    }
    body: dict[str, Any] = {"data": [event], "access_token": job.destination.secret}
    if config.get("test_event_code"):
        body["test_event_code"] = config["test_event_code"]
    return OutboundRequest(
        "POST",
        f"{base_url}/{config['pixel_id']}/events",
        headers=(("content-type", "application/json"),),
        body=json.dumps(body, separators=(",", ":")).encode(),
        secrets=(job.destination.secret or "",),
    )


def _first(job: Job) -> datetime:
    created: datetime = job.conversion["created_at"]
    return created


def _user_data(job: Job) -> dict[str, Any]:
    data: dict[str, Any] = {}
    click = job.click
    if click is not None:
        if click.get("fbclid"):
            created_ms = int(click["created_at"].timestamp() * 1000)
            data["fbc"] = f"fb.1.{created_ms}.{click['fbclid']}"
        data["client_ip_address"] = click["ip"]
        data["client_user_agent"] = click["user_agent"]
    if job.conversion.get("buyer_email_sha256"):
        data["em"] = [job.conversion["buyer_email_sha256"]]
    if job.conversion.get("buyer_phone_sha256"):
        data["ph"] = [job.conversion["buyer_phone_sha256"]]
    return data
