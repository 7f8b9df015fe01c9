"""Google Ads click conversions: an OAuth access token from the refresh token, then
``POST {ads}/customers/{customer_id}:uploadClickConversions`` with ``partialFailure: true``.

A 200 answer may still refuse the conversion (``partialFailureError``, e.g. an unknown gclid):
that is recorded as a rejection of the delivery.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from trilha.conversions.status import Status
from trilha.deliveries.jobs import Job, OutboundRequest, Skip
from trilha.deliveries.kinds import GOOGLE_ADS_SECRETS
from trilha.deliveries.problems import NO_GOOGLE_CLICK, NOT_TOLD
from trilha.errors import InvalidInput


def check_config(config: dict[str, Any], stored: dict[str, Any] | None = None) -> dict[str, Any]:
    """customer_id, conversion_action (ids, dashes allowed), client_id, client_secret,
    developer_token, login_customer_id (optional). Secret keys left out keep the stored ones.

    >>> check_config({"customer_id": "123-456-7890", "conversion_action": "55",
    ...   "client_id": "c", "client_secret": "s", "developer_token": "d"})["customer_id"]
    '1234567890'
    """
    kept = {
        k: v for k, v in (stored or {}).items() if k in GOOGLE_ADS_SECRETS and not config.get(k)
    }
    merged = {**config, **kept}
    checked: dict[str, Any] = {}
    for name in ("customer_id", "conversion_action", "login_customer_id"):
        digits = str(merged.get(name) or "").replace("-", "").strip()
        if digits and (not digits.isdigit() or len(digits) > 20):
            raise InvalidInput({f"config.{name}": "digits only, as Google Ads shows it"})
        if not digits and name != "login_customer_id":
            raise InvalidInput({f"config.{name}": "required"})
        checked[name] = digits or None
    for name in ("client_id", *sorted(GOOGLE_ADS_SECRETS)):
        value = str(merged.get(name) or "").strip()
        if not value or len(value) > 300:
            raise InvalidInput({f"config.{name}": "required"})
        checked[name] = value
    return checked


def token_request(job: Job, *, oauth_url: str) -> OutboundRequest:
    """The OAuth refresh: its answer's access_token authorises the upload."""
    config, refresh = job.destination.config, job.destination.secret or ""
    form = {
        "grant_type": "refresh_token",
        "client_id": config["client_id"],
        "client_secret": config["client_secret"],
        "refresh_token": refresh,
    }
    return OutboundRequest(
        "POST",
        oauth_url,
        headers=(("content-type", "application/x-www-form-urlencoded"),),
        body=urlencode(form).encode(),
        secrets=(config["client_secret"], refresh),
    )


def upload_request(
    job: Job, *, ads_url: str, access_token: str, now: datetime
) -> OutboundRequest | Skip:
    if job.conversion_status is not Status.APPROVED:
        return Skip(NOT_TOLD.say(platform="Google Ads", status=job.conversion_status))
    config = job.destination.config
    params = (job.click or {}).get("params") or {}
    ids = {
        "gclid": (job.click or {}).get("gclid"),
        "gbraid": params.get("gbraid"),
        "wbraid": params.get("wbraid"),
    }
    found = {name: value for name, value in ids.items() if value}
    if not found:
        return Skip(NO_GOOGLE_CLICK.say())
    name, value = next(iter(found.items()))
    customer = config["customer_id"]
    conversion = {
        name: value,
        "conversionAction": f"customers/{customer}/conversionActions/{config['conversion_action']}",
        "conversionDateTime": conversion_time(job),
        "conversionValue": float(job.value),
        "currencyCode": job.currency,
    }
    if job.conversion["txid"]:
        conversion["orderId"] = job.conversion["txid"]
    headers = [
        ("content-type", "application/json"),
        ("authorization", f"Bearer {access_token}"),
        ("developer-token", config["developer_token"]),
    ]
    if config.get("login_customer_id"):
        headers.append(("login-customer-id", config["login_customer_id"]))
    body = {"conversions": [conversion], "partialFailure": True}
    return OutboundRequest(
        "POST",
        f"{ads_url}/customers/{customer}:uploadClickConversions",
        headers=tuple(headers),
        body=json.dumps(body, separators=(",", ":")).encode(),
        secrets=(access_token, config["developer_token"]),
    )


def conversion_time(job: Job) -> str:
    """``yyyy-mm-dd hh:mm:ss+hh:mm`` on the workspace's clock, as Google asks."""
    zone = ZoneInfo(job.link.timezone if job.link else "UTC")
    moment: datetime = job.conversion["created_at"].astimezone(zone)
    text = moment.strftime("%Y-%m-%d %H:%M:%S%z")
    return f"{text[:-2]}:{text[-2:]}"


def access_token_of(answer: str) -> str | None:
    """The access token of an OAuth answer, if it holds one.

    >>> access_token_of('{"access_token": "ya29.x", "expires_in": 3599}')
    'ya29.x'
    """
    try:
        token = json.loads(answer).get("access_token")
    except (ValueError, AttributeError):
        return None
    return token if isinstance(token, str) and token else None


def refusal_of(answer: str) -> str | None:
    """The per-row error a successful upload answer carries, if any.

    >>> refusal_of('{"partialFailureError": {"code": 3, "message": "bad gclid"}}')
    'bad gclid'
    >>> refusal_of('{"results": [{"gclid": "x"}]}') is None
    True
    """
    try:
        error = json.loads(answer).get("partialFailureError")
    except (ValueError, AttributeError):
        return "an answer that is no JSON"
    if not error:
        return None
    return str(error.get("message") or error)[:500] if isinstance(error, dict) else str(error)
