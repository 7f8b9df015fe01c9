"""What each kind of destination sends: a signed webhook, and Meta's Conversions API event
(checked by a local server standing in for Meta)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.deliveries.conftest import click_on, eventually, make_destination, report
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, make_workspace
from tests.web.callers import make_owner
from trilha.conversions.status import Status
from trilha.currencies import ecb_rate
from trilha.db.schema import deliveries, delivery_attempts, destinations
from trilha.deliveries.destinations import Spec
from trilha.deliveries.kinds import Kind, Method
from trilha.errors import InvalidInput
from trilha.settings import Settings

TOKEN = "EAAB-meta-access-token-0123456789"


@pytest.fixture
def settings(settings: Settings, receiver: Receiver) -> Settings:
    return settings.model_copy(
        update={
            "meta_graph_url": receiver.url("/meta/v21.0"),
            "google_oauth_url": receiver.url("/google/token"),
            "google_ads_url": receiver.url("/google/ads/v19"),
            "tiktok_events_url": receiver.url("/tiktok/v1.3"),
        }
    )


async def arrived(receiver: Receiver, prefix: str, count: int = 1) -> list[Any]:
    async def enough() -> bool:
        return len([r for r in receiver.requests if r.path.startswith(prefix)]) >= count

    await eventually(enough)
    return [r for r in receiver.requests if r.path.startswith(prefix)]


async def test_a_webhook_is_signed_as_standard_webhooks_says(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    destination = await make_destination(
        db, workspace, Spec("CRM", Kind.WEBHOOK, receiver.url("/hook")), settings=settings
    )
    click = await click_on(client, db, workspace, "?sub1=aff")

    body = await report(client, workspace, click["id"])
    [request] = await arrived(receiver, "/hook")

    [delivery] = await fetch_all(db, deliveries)
    headers = request.headers
    assert headers["content-type"] == "application/json"
    assert headers["webhook-id"] == delivery["id"]
    secret = destination.secret or ""
    assert secret.startswith("whsec_")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + request.body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert headers["webhook-signature"] == f"v1,{expected}"
    payload = json.loads(request.body)
    assert payload["type"] == "conversion.approved"
    assert payload["data"] | {"created_at": None} == {
        "id": body["conversion_id"],
        "event": "SALE",
        "status": "approved",
        "value": "97.00",
        "currency": "BRL",
        "txid": "T1",
        "click_id": click["id"],
        "campaign_id": click["campaign_id"],
        "source_id": None,
        "created_at": None,
        "sub1": "aff",
        "is_test": False,
    }

    async def recorded() -> bool:
        return bool(await fetch_all(db, delivery_attempts))

    await eventually(recorded)
    [attempt] = await fetch_all(db, delivery_attempts)
    assert secret not in attempt["request"]


META = {"pixel_id": "1234567890", "test_event_code": "TEST42", "refund_event": "Refund"}


async def test_meta_gets_a_purchase_and_then_the_refund(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    await make_destination(
        db,
        workspace,
        Spec("Meta", Kind.META_CAPI, secret=TOKEN, config=META),
        settings=settings,
    )
    click = await click_on(client, db, workspace, "?fbclid=IwAR0abc")

    body = await report(client, workspace, click["id"])
    [purchase] = await arrived(receiver, "/meta/")
    await report(client, workspace, click["id"], status="refunded")
    [_, refund] = await arrived(receiver, "/meta/", 2)

    assert purchase.method == "POST"
    assert purchase.path == "/meta/v21.0/1234567890/events"
    sent = json.loads(purchase.body)
    assert (sent["access_token"], sent["test_event_code"]) == (TOKEN, "TEST42")
    [event] = sent["data"]
    click_ms = int(click["created_at"].timestamp() * 1000)
    assert event == {
        "event_name": "Purchase",
        "event_time": event["event_time"],
        "event_id": body["conversion_id"],
        "action_source": "website",
        "user_data": {
            "fbc": f"fb.1.{click_ms}.IwAR0abc",
            "client_ip_address": click["ip"],
            "client_user_agent": click["user_agent"],
        },
        "custom_data": {"value": 97.0, "currency": "BRL"},
    }
    assert isinstance(event["event_time"], int)
    [reversal] = json.loads(refund.body)["data"]
    assert (reversal["event_name"], reversal["event_id"]) == (
        "Refund",
        f"{body['conversion_id']}:refunded",
    )

    async def recorded() -> bool:
        return len(await fetch_all(db, delivery_attempts)) == 2

    await eventually(recorded)
    assert all(TOKEN not in a["request"] for a in await fetch_all(db, delivery_attempts))


async def test_meta_is_not_told_of_refunds_unless_asked(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    config = {"pixel_id": "1234567890"}
    await make_destination(
        db, workspace, Spec("Meta", Kind.META_CAPI, secret=TOKEN, config=config), settings=settings
    )
    click = await click_on(client, db, workspace)

    await report(client, workspace, click["id"])
    await arrived(receiver, "/meta/")
    await report(client, workspace, click["id"], status="refunded")

    async def both_done() -> bool:
        rows = await fetch_all(db, deliveries)
        return len(rows) == 2 and all(r["state"] != "pending" for r in rows)

    await eventually(both_done)
    states = {r["conversion_status"]: r["state"] for r in await fetch_all(db, deliveries)}
    assert states == {"approved": "sent", "refunded": "skipped"}
    assert len(await arrived(receiver, "/meta/")) == 1


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (Spec("x", Kind.POSTBACK, "https://t.example/pb?c={clickid}"), "url: unknown macro"),
        (Spec("x", Kind.POSTBACK, "https://{sub1}.example/pb"), "url: the host may not"),
        (Spec("x", Kind.POSTBACK, "ftp://t.example/pb"), "url: must start with http"),
        (Spec("x", Kind.WEBHOOK, "https://t.example/h?c={sub1}"), "url: a webhook URL takes"),
        (Spec("x", Kind.META_CAPI, config={"pixel_id": "12"}), "secret: Meta's access token"),
        (Spec("x", Kind.META_CAPI, secret="t", config={}), "config.pixel_id:"),
        (Spec("x", Kind.TIKTOK_EVENTS, secret="t", config={}), "config.pixel_code:"),
        (Spec("x", Kind.GOOGLE_ADS, secret="r", config={}), "config.customer_id: required"),
    ],
)
async def test_a_bad_destination_is_refused_with_a_clear_error(
    db: AsyncEngine, spec: Spec, error: str
) -> None:
    workspace = await make_workspace(db)

    with pytest.raises(InvalidInput) as refused:
        await make_destination(db, workspace, spec)

    assert str(refused.value).startswith(error)
    assert await fetch_all(db, destinations) == []


async def test_a_post_postback_sends_its_query_as_a_form(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    spec = Spec(
        "Form",
        Kind.POSTBACK,
        receiver.url("/form?cid={sub1}&s={status}"),
        method=Method.POST,
        statuses=(Status.APPROVED,),
    )
    await make_destination(db, workspace, spec, settings=settings)
    click = await click_on(client, db, workspace, "?sub1=z")

    await report(client, workspace, click["id"])
    [request] = await arrived(receiver, "/form")

    assert request.method == "POST"
    assert request.body == b"cid=z&s=approved"
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"


async def test_values_go_in_the_destination_s_currency_at_the_rate_of_the_day(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)  # in BRL
    for name, currency in (("dollars", "USD"), ("reais", "BRL"), ("own", None)):
        spec = Spec(
            name,
            Kind.POSTBACK,
            receiver.url(f"/{name}?p={{payout}}&c={{currency}}"),
            currency=currency,
        )
        await make_destination(db, workspace, spec, settings=settings)
    click = await click_on(client, db, workspace)

    await report(client, workspace, click["id"], payout="97,00")
    [dollars] = await arrived(receiver, "/dollars")
    [reais] = await arrived(receiver, "/reais")
    [own] = await arrived(receiver, "/own")

    rate = ecb_rate("BRL", "USD", datetime.now(UTC).date())
    assert rate is not None
    expected = (Decimal("97.00") * rate).quantize(Decimal("0.01"), ROUND_HALF_UP)
    assert dollars.query == {"p": [str(expected)], "c": ["USD"]}
    assert reais.query == own.query == {"p": ["97.00"], "c": ["BRL"]}
    with pytest.raises(InvalidInput) as refused:
        await make_destination(db, workspace, Spec("x", Kind.POSTBACK, spec.url, currency="ZZZ"))
    assert refused.value.fields == {"currency": "must be an ISO 4217 code such as USD"}


GOOGLE = {
    "customer_id": "123-456-7890",
    "conversion_action": "987",
    "client_id": "client.apps.googleusercontent.com",
    "client_secret": "GOCSPX-client-secret",
    "developer_token": "dev-token-0123456789",
}


async def test_google_ads_gets_the_click_conversion_with_a_fresh_token(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    spec = Spec("Google", Kind.GOOGLE_ADS, secret="1//refresh-token", config=GOOGLE)
    await make_destination(db, workspace, spec, settings=settings)
    click = await click_on(client, db, workspace, "?gclid=Cj0KCQ-gclid")

    await report(client, workspace, click["id"])
    token, upload = await arrived(receiver, "/google/", 2)

    assert token.path == "/google/token"
    assert parse_qs(token.body.decode()) == {
        "grant_type": ["refresh_token"],
        "client_id": [GOOGLE["client_id"]],
        "client_secret": [GOOGLE["client_secret"]],
        "refresh_token": ["1//refresh-token"],
    }
    assert upload.path == "/google/ads/v19/customers/1234567890:uploadClickConversions"
    assert upload.headers["authorization"] == "Bearer ya29.fresh-token"
    assert upload.headers["developer-token"] == GOOGLE["developer_token"]
    sent = json.loads(upload.body)
    [conversion] = sent["conversions"]
    assert sent["partialFailure"] is True
    assert conversion | {"conversionDateTime": None} == {
        "gclid": "Cj0KCQ-gclid",
        "conversionAction": "customers/1234567890/conversionActions/987",
        "conversionDateTime": None,
        "conversionValue": 97.0,
        "currencyCode": "BRL",
        "orderId": "T1",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d-03:00", conversion["conversionDateTime"])

    async def recorded() -> bool:
        return bool(await fetch_all(db, delivery_attempts))

    await eventually(recorded)
    [attempt] = await fetch_all(db, delivery_attempts)
    assert attempt["outcome"] == "success"
    assert "ya29.fresh-token" not in attempt["request"]
    assert GOOGLE["developer_token"] not in attempt["request"]


async def test_a_conversion_google_refuses_inside_a_200_is_a_rejection(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    spec = Spec("Google", Kind.GOOGLE_ADS, secret="1//refresh-token", config=GOOGLE)
    destination = await make_destination(db, workspace, spec, settings=settings)
    click = await click_on(client, db, workspace, "?gclid=unknown")

    await report(client, workspace, click["id"])

    async def recorded() -> bool:
        return bool(await fetch_all(db, delivery_attempts))

    await eventually(recorded)
    [attempt] = await fetch_all(db, delivery_attempts)
    assert (attempt["outcome"], attempt["status_code"]) == ("rejected", 200)
    assert attempt["error"] == "Google refused it: The click is not found."
    [delivery] = await fetch_all(db, deliveries)
    assert delivery["state"] == "failed"
    [row] = await fetch_all(db, destinations, id=destination.id)
    assert row["consecutive_failures"] == 1


async def test_google_credentials_are_masked_in_answers(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    body = {"name": "G", "kind": "google_ads", "secret": "1//refresh-token", "config": GOOGLE}

    made = await client.post(
        f"/api/v1/workspaces/{workspace.id}/destinations", json=body, headers=owner.headers
    )

    assert made.status_code == 201, made.text
    assert made.json()["config"]["developer_token"] == "••••6789"
    assert made.json()["config"]["client_secret"] == "••••cret"
    assert "1//refresh-token" not in made.text
    changed = await client.put(
        f"/api/v1/workspaces/{workspace.id}/destinations/{made.json()['id']}",
        json=body | {"name": "G2", "config": {**GOOGLE, "developer_token": None}},
        headers=owner.headers,
    )
    assert changed.status_code == 200, changed.text
    [row] = await fetch_all(db, destinations)
    assert row["config"]["developer_token"] == GOOGLE["developer_token"]  # kept


TIKTOK = {"pixel_code": "C4ABCDEF12345", "test_event_code": "TEST12345"}


async def test_tiktok_gets_a_complete_payment_with_the_ttclid(
    client: httpx.AsyncClient, db: AsyncEngine, settings: Settings, receiver: Receiver
) -> None:
    workspace = await make_workspace(db)
    spec = Spec("TikTok", Kind.TIKTOK_EVENTS, secret="tt-access-token-0123", config=TIKTOK)
    await make_destination(db, workspace, spec, settings=settings)
    click = await click_on(client, db, workspace, "?ttclid=E.C.P.tt-click")

    body = await report(client, workspace, click["id"])
    [request] = await arrived(receiver, "/tiktok/")

    assert request.path == "/tiktok/v1.3/event/track/"
    assert request.headers["access-token"] == "tt-access-token-0123"
    sent = json.loads(request.body)
    [event] = sent["data"]
    assert (sent["event_source"], sent["event_source_id"], sent["test_event_code"]) == (
        "web",
        "C4ABCDEF12345",
        "TEST12345",
    )
    assert event | {"event_time": None} == {
        "event": "CompletePayment",
        "event_time": None,
        "event_id": body["conversion_id"],
        "user": {
            "ttclid": "E.C.P.tt-click",
            "ip": click["ip"],
            "user_agent": click["user_agent"],
        },
        "properties": {"value": 97.0, "currency": "BRL", "order_id": "T1"},
    }

    async def recorded() -> bool:
        return bool(await fetch_all(db, delivery_attempts))

    await eventually(recorded)
    [attempt] = await fetch_all(db, delivery_attempts)
    assert (attempt["outcome"], attempt["response"]) == (
        "success",
        '{"code": 0, "message": "OK", "data": {}}',
    )
    assert "tt-access-token-0123" not in attempt["request"]
