"""Generic: any platform or tracker that calls a URL with parameters or posts a form or JSON.

The sample delivery is a GET with parameters, as trackers and custom checkouts call a postback URL.
"""

from __future__ import annotations

from urllib.parse import urlencode

from trilha.conversions.status import Status
from trilha.postbacks.preset import AuthKind, Preset, SecretOrigin
from trilha.postbacks.sample import USER_AGENT, Sale, Sample, SampleRequest, Words

PRESET = Preset(
    name="generic",
    label="Generic (any webhook)",
    paths={
        "click_id": (
            "click_id",
            "clickid",
            "cid",
            "subid",
            "sub_id",
            "sck",
            "src",
            "s1",
            "aff_sub",
            "visitor_id",
        ),
        "event": ("tipo", "event", "type", "et"),
        "status": ("status",),
        "value": ("payout", "valor", "value", "amount", "revenue", "sum"),
        "net_value": ("net", "commission", "comissao"),
        "currency": ("moeda", "currency"),
        "txid": ("txid", "transaction_id", "transaction", "tid", "order_id", "orderid"),
        "occurred_at": ("occurred_at", "event_time"),
        "secret": ("secret",),
    },
    rules=(),
    auth=AuthKind.FIELD,
    setup="?token=WORKSPACE_TOKEN&click_id={click id}&tipo=venda&payout={value}&txid={order id}"
    "&status={status}",
    secret_origin=SecretOrigin.PERSON,
)


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
