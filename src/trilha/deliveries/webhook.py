"""Signed webhooks: the conversion as JSON, signed as Standard Webhooks specifies.

``webhook-id`` is the delivery's id (the same on every retry, so receivers can dedupe);
``webhook-signature`` is ``v1,`` and the base64 HMAC-SHA256 of ``{id}.{timestamp}.{body}`` under
the secret (the base64 after ``whsec_``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime
from typing import Any

from trilha.deliveries.jobs import Job, OutboundRequest


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header's value (the specification's own example):

    >>> sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek",
    ...      1614265330, b'{"test": 2432232314}')
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE='
    """
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def build_webhook(job: Job, *, now: datetime) -> OutboundRequest:
    body = json.dumps(payload(job), separators=(",", ":")).encode()
    timestamp = int(now.timestamp())
    secret = job.destination.secret or ""
    secrets = [secret, *_previous(job, now)]
    signatures = " ".join(sign(s, job.delivery_id, timestamp, body) for s in secrets)
    return OutboundRequest(
        "POST",
        job.destination.url,
        headers=(
            ("content-type", "application/json"),
            ("webhook-id", job.delivery_id),
            ("webhook-timestamp", str(timestamp)),
            ("webhook-signature", signatures),
        ),
        body=body,
        secrets=tuple(secrets),
    )


def _previous(job: Job, now: datetime) -> list[str]:
    """The secret before the last rotation, while it still signs."""
    config = job.destination.config
    until = config.get("previous_until")
    if not config.get("previous_secret") or not until:
        return []
    return [config["previous_secret"]] if datetime.fromisoformat(until) > now else []


def payload(job: Job) -> dict[str, Any]:
    conversion = job.conversion
    click = job.click or {}
    return {
        "type": f"conversion.{job.conversion_status}",
        "timestamp": job.created_at.isoformat(),
        "data": {
            "id": conversion["id"],
            "event": conversion["event_type"],
            "status": str(job.conversion_status),
            "value": str(job.value),
            "currency": job.currency,
            "txid": conversion["txid"],
            "click_id": conversion["click_id"],
            "campaign_id": conversion["campaign_id"],
            "source_id": conversion["source_id"],
            "created_at": conversion["created_at"].isoformat(),
            "sub1": click.get("sub1"),
            "is_test": bool(conversion["is_test"]),
        },
    }
