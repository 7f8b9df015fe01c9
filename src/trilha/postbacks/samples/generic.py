"""Generic: a GET with parameters, as trackers and custom checkouts call a postback URL."""

from __future__ import annotations

from urllib.parse import urlencode

from trilha.postbacks.preset import Status
from trilha.postbacks.sample import USER_AGENT, Sale, Sample, SampleRequest, Words


def words(event_type: str, status: Status) -> Words:
    """Our own words: `tipo` names the event type, `status` the status."""
    return event_type, status.value


def build(sale: Sale) -> SampleRequest:
    params = {
        "click_id": sale.click_id,
        "tipo": sale.event,
        "status": sale.status,
        "payout": f"{sale.value:.2f}",
        "currency": sale.currency,
        "txid": sale.txid,
        "secret": sale.secret,
    }
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return SampleRequest("GET", "", query, (USER_AGENT,), b"")


SAMPLE = Sample(words, build)
