"""Destinations in the browser: a Keitaro postback from its template, tested, receiving a real
sale and then its refund; one made after sales offers to send them; a destination that keeps
answering 404 switches itself off with the reason and a notice."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.async_api import Page, expect
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import make_click
from tests.deliveries.receiver import Receiver
from tests.factories import fetch_all, fetch_clicks
from trilha.db.schema import destinations
from trilha.settings import Settings

pytestmark = BROWSER


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Deliveries may reach the receiver on 127.0.0.1."""
    return settings.model_copy(
        update={"delivery_allow_private": True, "delivery_poll_interval": 0.2}
    )


@pytest.fixture
def live_settings(live_settings: Settings, receiver: Receiver) -> Settings:
    """Google's endpoints are the receiver's."""
    return live_settings.model_copy(
        update={
            "google_oauth_url": receiver.url("/google/token"),
            "google_ads_url": receiver.url("/google/ads/v19"),
        }
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


async def sale(live_server: str, token: str, click_id: str, status: str = "approved") -> None:
    async with httpx.AsyncClient() as client:
        response = await client.get(
            f"{live_server}/pb",
            params={
                "token": token,
                "click_id": click_id,
                "tipo": "venda",
                "payout": "97,00",
                "txid": "T1",
                "status": status,
            },
        )
    assert response.status_code == 200, response.text


async def last_click(db: AsyncEngine, campaign_id: str) -> str:
    rows = await fetch_clicks(db, campaign_id=campaign_id)
    return str(max(rows, key=lambda r: r["created_at"])["id"])


async def arrived(receiver: Receiver, path: str, count: int) -> None:
    started = time.monotonic()
    while len(receiver.at(path)) < count:
        assert time.monotonic() - started < 5, receiver.requests
        await asyncio.sleep(0.02)


async def test_a_keitaro_postback_gets_the_sale_and_its_refund(
    page: Page, db: AsyncEngine, owner: Account, receiver: Receiver, live_server: str
) -> None:
    workspace = owner.workspace
    await page.goto(f"/w/{workspace.id}/destinations")
    await page.click("#template-keitaro")
    await expect(page.locator("#field-url")).to_have_value(
        "https://KEITARO-DOMAIN/POSTBACK-KEY/postback?subid={sub1}&status={status}"
        "&payout={payout}&currency={currency}&tid={txid}&lead_status=pending"
        "&sale_status=approved&rejected_status=declined,refunded,chargeback"
    )
    await page.fill("#field-url", receiver.url("/ok?subid={sub1}&status={status}&payout={clikid}"))
    await page.check("input[name=statuses][value=approved]")
    await page.check("input[name=statuses][value=refunded]")
    await page.click("#destination-submit")
    await expect(page.locator("#error-url")).to_have_text("macro desconhecida {clikid}")
    await page.fill("#field-url", receiver.url("/ok?subid={sub1}&status={status}&payout={payout}"))
    await page.check("input[name=statuses][value=approved]")
    await page.check("input[name=statuses][value=refunded]")
    await page.click("#destination-submit")

    await expect(page.locator("#flash")).to_contain_text("Destino Keitaro criado")
    # Verifying, then active once the worker has checked the address (often before the page
    # shows: the worker looks every 0.2 s here).
    await expect(page.locator("#destination-status")).to_have_text(re.compile("Verificando|Ativo"))
    await page.wait_for_timeout(500)
    await page.reload()
    await expect(page.locator("#destination-status")).to_have_text("Ativo")

    await page.click("#send-test")
    await expect(page.locator("#test-result")).to_contain_text("Sucesso · HTTP 200")
    [test] = receiver.at("/ok")
    assert test.query == {"subid": ["test"], "status": ["approved"], "payout": ["97.00"]}

    campaign, _ = await make_click(db, live_server, workspace)
    async with httpx.AsyncClient() as client:  # a visitor sent by Keitaro, with its subid
        await client.get(f"{live_server}/r/{campaign.slug}?sub1=kt-777")
    click_id = await last_click(db, campaign.id)
    await sale(live_server, workspace.postback_token, click_id)
    await arrived(receiver, "/ok", 2)  # how soon: bench/deliveries.py measures it
    await sale(live_server, workspace.postback_token, click_id, status="refunded")
    await arrived(receiver, "/ok", 3)
    sent = [(r.query["subid"][0], r.query["status"][0]) for r in receiver.at("/ok")[1:]]
    assert sent == [("kt-777", "approved"), ("kt-777", "refunded")]

    await page.reload()
    await expect(page.locator("#deliveries .delivery")).to_have_count(2)
    await expect(page.locator("#deliveries")).to_contain_text("Reembolsada")
    await expect(page.locator("#deliveries")).to_contain_text("Enviada")

    # The delivery log says which sale each delivery was for; a success shows no error.
    await page.goto(f"/w/{workspace.id}/deliveries")
    first = page.locator("#deliveries .delivery").first
    await expect(first.locator(".txid")).to_have_text("T1")
    await expect(first.locator(".value")).to_have_text("R$ 97,00")
    await expect(first.locator(".campaign")).to_have_text(campaign.name)
    await expect(first.locator(".last-error")).to_have_text("—")
    await expect(page.locator("#deliveries")).not_to_contain_text("HTTP 200")
    await page.fill("#filter-txid", "T2")
    await page.click("#filter-submit")
    await expect(page.locator("#no-deliveries")).to_be_visible()
    await page.fill("#filter-txid", "T1")
    await page.click("#filter-submit")
    await expect(page.locator("#deliveries .delivery")).to_have_count(2)

    # A conversion's page lists its deliveries, and opens the log filtered on them.
    await first.locator(".txid a").click()
    await expect(page.locator("#conversion-deliveries .delivery")).to_have_count(2)
    await page.click("#conversion-deliveries h4 a")
    await expect(page.locator("#filter-conversion")).to_be_visible()
    await expect(page.locator("#deliveries .delivery")).to_have_count(2)


async def test_a_destination_that_keeps_answering_404_switches_itself_off(
    page: Page, db: AsyncEngine, owner: Account, receiver: Receiver, live_server: str
) -> None:
    workspace = owner.workspace
    await page.goto(f"/w/{workspace.id}/destinations/new?kind=postback")
    await page.fill("#field-name", "Old tracker")
    await page.fill("#field-url", receiver.url("/404?cid={sub1}"))
    await page.click("#destination-submit")
    await expect(page.locator("#flash")).to_contain_text("Destino Old tracker criado")
    [row] = await fetch_all(db, destinations)
    async with db.begin() as conn:  # nine 404s in a row already
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == row["id"])
            .values(status="active", consecutive_failures=9)
        )

    _, click_id = await make_click(db, live_server, workspace)
    await sale(live_server, workspace.postback_token, click_id)
    await arrived(receiver, "/404", 1)
    await page.wait_for_timeout(300)
    await page.goto(f"/w/{workspace.id}/destinations")

    notice = page.locator(".notice")
    await expect(notice).to_contain_text("Old tracker")
    await expect(notice).to_contain_text(
        "foi desativado: 10 recusas seguidas; a última: O destino respondeu HTTP 404"
    )
    await expect(page.locator(f"#destination-{row['id']}")).to_contain_text("Inativo")
    await notice.locator("button").click()
    await expect(page.locator(".notice")).to_have_count(0)
    await page.click(f"#destination-{row['id']} a")
    await expect(page.locator("#status-reason")).to_have_text(
        "10 recusas seguidas; a última: O destino respondeu HTTP 404"
    )
    await page.click("#deliveries .delivery a")
    await expect(page.locator(".attempt")).to_contain_text("HTTP 404")
    await expect(page.locator(".attempt")).to_contain_text("answer 404")


async def test_a_destination_made_after_sales_offers_to_send_them_now(
    page: Page, db: AsyncEngine, owner: Account, receiver: Receiver, live_server: str
) -> None:
    workspace = owner.workspace
    _, click_id = await make_click(db, live_server, workspace)
    await sale(live_server, workspace.postback_token, click_id)

    await page.goto(f"/w/{workspace.id}/destinations/new?kind=postback")
    await page.fill("#field-name", "Late tracker")
    await page.fill("#field-url", receiver.url("/late?cid={sub1}&tid={txid}"))
    await page.click("#destination-submit")

    await expect(page.locator("#flash")).to_contain_text("Destino Late tracker criado")
    offer = page.locator("#earlier-sales")
    await expect(offer).to_contain_text("Este workspace já tem 1 venda de antes deste destino")
    await expect(offer).to_contain_text("Enviar as vendas de um período")
    await expect(page.locator("#send-earlier")).to_have_text("Enviar a venda")
    # The period form below is filled with the same days.
    today = await page.locator("#resend-form #field-since").input_value()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", today)
    await expect(page.locator("#resend-form #field-until")).to_have_value(today)

    await page.wait_for_timeout(500)  # the worker verifies the destination (every 0.2 s)
    await page.click("#send-earlier")
    await expect(page.locator("#flash")).to_have_text("1 entrega na fila.")
    await arrived(receiver, "/late", 1)
    [sent] = receiver.at("/late")
    assert sent.query["tid"] == ["T1"]
    # Once it has deliveries, the offer is gone.
    await page.reload()
    await expect(page.locator("#deliveries .delivery")).to_have_count(1)
    await expect(page.locator("#earlier-sales")).to_have_count(0)


async def test_a_destination_in_a_workspace_without_sales_offers_nothing(
    page: Page, owner: Account, receiver: Receiver
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/destinations/new?kind=postback")
    await page.fill("#field-name", "First tracker")
    await page.fill("#field-url", receiver.url("/first?cid={sub1}"))
    await page.click("#destination-submit")

    await expect(page.locator("#flash")).to_contain_text("Destino First tracker criado")
    await expect(page.locator("#earlier-sales")).to_have_count(0)


async def test_a_google_ads_destination_is_made_and_tested(
    page: Page, db: AsyncEngine, owner: Account, receiver: Receiver
) -> None:
    await page.goto(f"/w/{owner.workspace.id}/destinations")
    await page.click("#new-google_ads")
    await page.fill("#field-name", "Google Ads")
    for field, value in (
        ("customer_id", "123-456-7890"),
        ("conversion_action", "987"),
        ("client_id", "client.apps.googleusercontent.com"),
        ("client_secret", "GOCSPX-secret"),
        ("developer_token", "dev-token-0123456789"),
        ("secret", "1//refresh-token"),
    ):
        await page.fill(f"#field-{field}", value)
    await page.click("#destination-submit")
    await expect(page.locator("#flash")).to_contain_text("Destino Google Ads criado")

    await page.click("#send-test")

    await expect(page.locator("#test-result")).to_contain_text("Sucesso · HTTP 200")
    await expect(page.locator("#test-result")).not_to_contain_text("dev-token-0123456789")
    [upload] = [r for r in receiver.requests if r.path.endswith(":uploadClickConversions")]
    assert b'"gclid":"TEST-GCLID"' in upload.body
    assert "dev-token" not in await page.content()
