"""The closed sets of deliveries: destination kinds and statuses, delivery states, outcomes."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Kind(StrEnum):
    POSTBACK = "postback"  # a URL template, e.g. a tracker's or a traffic source's postback
    WEBHOOK = "webhook"  # the conversion as JSON, signed (Standard Webhooks)
    META_CAPI = "meta_capi"  # Meta's Conversions API
    GOOGLE_ADS = "google_ads"
    TIKTOK_EVENTS = "tiktok_events"


class Method(StrEnum):
    GET = "GET"
    POST = "POST"


class DestinationStatus(StrEnum):
    VERIFYING = "verifying"  # new or edited: its URL is checked before anything is sent
    ACTIVE = "active"
    INACTIVE = "inactive"  # switched off by the user, a failed check, or repeated rejections


class DeliveryState(StrEnum):
    PENDING = "pending"  # due at next_attempt_at (claimed while its lease runs)
    SENT = "sent"
    FAILED = "failed"  # rejected, or the retry schedule ran out
    SKIPPED = "skipped"  # never to be sent (e.g. too old for Meta)


class AttemptOutcome(StrEnum):
    SUCCESS = "success"  # a 2xx answer
    TEMPORARY = "temporary"  # timeout, network error, 408, 429, 5xx: tried again later
    REJECTED = "rejected"  # 3xx or another 4xx: counts towards switching the destination off
    REFUSED = "refused"  # trilha would not connect (a private address, a bad URL)
    SKIPPED = "skipped"


# Google Ads' config keys that are credentials: masked in answers, kept on an edit that leaves
# them empty.
GOOGLE_ADS_SECRETS: Final = frozenset({"client_secret", "developer_token"})
