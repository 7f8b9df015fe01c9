"""TikTok's Events API (Events 2.0): a sale as a web event of the pixel.

Request: POST {events}/event/track/ with header ``Access-Token`` and
``{"event_source": "web", "event_source_id": <pixel code>, "data": [event]}``; an event holds
``event``, ``event_time`` (Unix seconds), ``event_id``, ``user`` (``ttclid``, hashed ``email``
and ``phone``, ``ip``, ``user_agent``) and ``properties`` (``value``, ``currency``,
``order_id``). TikTok answers HTTP 200 with ``"code": 0`` when it took the event; another code
in a 200 is a refusal.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any, Final

from trilha.conversions.status import Status
from trilha.deliveries.jobs import Job, OutboundRequest, Skip
from trilha.deliveries.problems import NOT_TOLD, TOO_OLD
from trilha.errors import InvalidInput

MAX_AGE: Final = timedelta(days=7)
DEFAULT_EVENT_NAMES: Final = {
    "SALE": "CompletePayment",
    "LEAD": "SubmitForm",
    "SIGNUP": "CompleteRegistration",
}
_CODE = re.compile(r"^[A-Z0-9]{6,40}$")
_EVENT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,49}$")


def check_config(config: dict[str, Any]) -> dict[str, Any]:
    """pixel_code (required), event_names, test_event_code.

    >>> check_config({"pixel_code": "c1abcdef2ghijk"})["pixel_code"]
    'C1ABCDEF2GHIJK'
    """
    pixel = str(config.get("pixel_code") or "").strip().upper()
    if not _CODE.match(pixel):
        raise InvalidInput({"config.pixel_code": "the pixel code, letters and digits, is required"})
    names = config.get("event_names") or {}
    if not isinstance(names, dict) or not all(
        isinstance(v, str) and _EVENT_NAME.match(v) for v in names.values()
    ):
        raise InvalidInput(
            {"config.event_names": "event type → TikTok event, e.g. CompletePayment"}
        )
    test_code = config.get("test_event_code") or None
    if test_code is not None and not (isinstance(test_code, str) and len(test_code) <= 40):
        raise InvalidInput({"config.test_event_code": "TikTok's test event code, e.g. TEST12345"})
    return {
        "pixel_code": pixel,
        "event_names": {str(k).upper(): v for k, v in names.items()},
        "test_event_code": test_code,
    }


def build_tiktok(job: Job, *, base_url: str, now: datetime) -> OutboundRequest | Skip:
    if job.conversion_status is not Status.APPROVED:
        return Skip(NOT_TOLD.say(platform="TikTok", status=job.conversion_status))
    at: datetime = job.conversion["created_at"]
    if now - at > MAX_AGE:
        return Skip(TOO_OLD.say())
    config = job.destination.config
    event_type = job.conversion["event_type"]
    names = {**DEFAULT_EVENT_NAMES, **config["event_names"]}
    event = {
        "event": names.get(event_type, event_type),
        "event_time": int(at.timestamp()),
        "event_id": job.conversion["id"],
        "user": _user(job),
        "properties": {"value": float(job.value), "currency": job.currency},
    }
    if job.conversion["txid"]:
        event["properties"]["order_id"] = job.conversion["txid"]
    body: dict[str, Any] = {
        "event_source": "web",
        "event_source_id": config["pixel_code"],
        "data": [event],
    }
    if config.get("test_event_code"):
        body["test_event_code"] = config["test_event_code"]
    token = job.destination.secret or ""
    return OutboundRequest(
        "POST",
        f"{base_url}/event/track/",
        headers=(("content-type", "application/json"), ("access-token", token)),
        body=json.dumps(body, separators=(",", ":")).encode(),
        secrets=(token,),
    )


def _user(job: Job) -> dict[str, Any]:
    user: dict[str, Any] = {}
    click = job.click
    if click is not None:
        if click.get("ttclid"):
            user["ttclid"] = click["ttclid"]
        user["ip"] = click["ip"]
        user["user_agent"] = click["user_agent"]
    if job.conversion.get("buyer_email_sha256"):
        user["email"] = job.conversion["buyer_email_sha256"]
    if job.conversion.get("buyer_phone_sha256"):
        user["phone"] = job.conversion["buyer_phone_sha256"]
    return user


def refusal_of(answer: str) -> str | None:
    """TikTok's refusal inside a 200 answer, if any.

    >>> refusal_of('{"code": 40001, "message": "Invalid pixel"}')
    'code 40001: Invalid pixel'
    >>> refusal_of('{"code": 0, "message": "OK"}') is None
    True
    """
    try:
        parsed = json.loads(answer)
    except ValueError:
        return "an answer that is no JSON"
    if not isinstance(parsed, dict) or parsed.get("code") == 0:
        return None
    return f"code {parsed.get('code')}: {str(parsed.get('message', ''))[:300]}"
