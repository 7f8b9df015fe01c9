"""The request each kind of destination makes of a delivery: one builder per kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from trilha.clicks import macro_values
from trilha.deliveries.jobs import Job, OutboundRequest, Skip
from trilha.deliveries.kinds import Kind, Method
from trilha.deliveries.meta import build_meta
from trilha.deliveries.postback import fill_postback
from trilha.deliveries.tiktok import build_tiktok
from trilha.deliveries.webhook import build_webhook
from trilha.macros import BUILTIN_MACROS, compile_template
from trilha.settings import Settings


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where the platforms' APIs are (settings, so tests can point them at a local server)."""

    meta_graph_url: str
    google_oauth_url: str = "https://oauth2.googleapis.com/token"
    google_ads_url: str = "https://googleads.googleapis.com/v19"
    tiktok_events_url: str = "https://business-api.tiktok.com/open_api/v1.3"

    @classmethod
    def from_settings(cls, settings: Settings) -> Endpoints:
        return cls(
            meta_graph_url=settings.meta_graph_url,
            google_oauth_url=settings.google_oauth_url,
            google_ads_url=settings.google_ads_url,
            tiktok_events_url=settings.tiktok_events_url,
        )

    def address_of(self, kind: Kind, url: str) -> str:
        """The URL whose host a destination calls (a template's host holds no macro)."""
        return {
            Kind.META_CAPI: self.meta_graph_url,
            Kind.GOOGLE_ADS: self.google_ads_url,
            Kind.TIKTOK_EVENTS: self.tiktok_events_url,
        }.get(kind, url)


Builder = Callable[[Job, Endpoints, datetime], OutboundRequest | Skip]


def build_postback(job: Job, endpoints: Endpoints, now: datetime) -> OutboundRequest:
    url = fill_postback(job.destination.url, postback_values(job))
    if job.destination.method is Method.POST:
        base, _, query = url.partition("?")
        return OutboundRequest(
            "POST",
            base,
            headers=(("content-type", "application/x-www-form-urlencoded"),),
            body=query.encode(),
        )
    return OutboundRequest("GET", url)


def postback_values(job: Job) -> dict[str, str]:
    """The click's macros (as the redirect filled them) and the conversion's."""
    values: dict[str, str] = {}
    if job.click is not None and job.link is not None:
        names = compile_template(job.destination.url).names & BUILTIN_MACROS.keys()
        values = macro_values(job.link, job.click, {}, names)
    conversion = job.conversion
    values.update(
        payout=str(job.value),
        currency=job.currency,
        txid=conversion["txid"] or "",
        status=str(job.conversion_status),
        event=conversion["event_type"],
        conversion_id=conversion["id"],
        conversion_time=str(int(job.created_at.timestamp())),
    )
    return values


# Google Ads takes two requests (an OAuth refresh, then the upload): see worker.upload_to_google.
BUILDERS: Final[dict[Kind, Builder]] = {
    Kind.POSTBACK: build_postback,
    Kind.WEBHOOK: lambda job, _, now: build_webhook(job, now=now),
    Kind.META_CAPI: lambda job, endpoints, now: build_meta(
        job, base_url=endpoints.meta_graph_url, now=now
    ),
    Kind.TIKTOK_EVENTS: lambda job, endpoints, now: build_tiktok(
        job, base_url=endpoints.tiktok_events_url, now=now
    ),
}


def build_request(job: Job, endpoints: Endpoints, now: datetime) -> OutboundRequest | Skip:
    return BUILDERS[job.destination.kind](job, endpoints, now)
