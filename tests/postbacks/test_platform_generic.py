"""The generic preset (any platform or tracker that calls a URL), and what every merchant can
change: field paths, rules, IP allowlist, dedupe mode, and how a postback finds its merchant."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign
from tests.postbacks.shop import (
    Shop,
    assert_log_keeps_no_secret,
    click_through,
    log_entries,
    only_conversion,
    open_shop,
    sell_through_merchant,
    status_history,
)
from tests.postbacks.test_platform_hotmart import HOTTOK, purchase
from trilha.db.schema import conversions
from trilha.postbacks.mapping import NO_NET_VALUE

CLICK_ID_ALIASES = [
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
]
EVENT_ALIASES = ["tipo", "event", "type", "et"]
VALUE_ALIASES = ["payout", "valor", "value", "amount", "revenue", "sum"]
CURRENCY_ALIASES = ["moeda", "currency"]
TXID_ALIASES = ["txid", "transaction_id", "transaction", "tid", "order_id", "orderid"]
NETWORK_SECRET = "pB3+q9/Zx2w=Lm7k"  # base64-like, as `openssl rand -base64` gives


async def open_generic(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("key", "rede-afiliados")
    return await open_shop(
        client,
        db,
        preset="generic",
        offer_url="https://oferta.example.com/lp?subid={click_id}",
        click_param="subid",
        **fields,
    )


@pytest.mark.parametrize("alias", CLICK_ID_ALIASES)
async def test_every_click_id_alias_finds_the_click(
    client: httpx.AsyncClient, db: AsyncEngine, alias: str
) -> None:
    shop = await open_generic(client, db)

    response = await client.get(
        "/postback", params={**shop.token, alias: shop.click_id, "txid": "T-1"}
    )

    assert response.json()["status"] == "created"
    assert (await only_conversion(db))["click_id"] == shop.click_id


@pytest.mark.parametrize("alias", EVENT_ALIASES)
async def test_every_event_alias_names_the_event_type(
    client: httpx.AsyncClient, db: AsyncEngine, alias: str
) -> None:
    shop = await open_generic(client, db)

    response = await client.get(
        "/pb", params={**shop.token, "click_id": shop.click_id, alias: "lead", "txid": "L-1"}
    )

    assert response.json()["event"] == "LEAD"
    assert (await only_conversion(db))["event_type"] == "LEAD"


@pytest.mark.parametrize("alias", VALUE_ALIASES)
async def test_every_value_alias_gives_the_value(
    client: httpx.AsyncClient, db: AsyncEngine, alias: str
) -> None:
    shop = await open_generic(client, db)

    await client.get("/pb", params={**shop.token, "click_id": shop.click_id, alias: "1.049,90"})

    assert (await only_conversion(db))["value_minor"] == 104990


async def test_a_net_merchant_counts_the_gross_when_there_is_no_net_and_logs_that_it_did(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, value_choice="net")

    sale = {**shop.token, "click_id": shop.click_id, "value": "97,00"}
    await client.get(shop.url, params={**sale, "txid": "T1"})
    await client.get(shop.url, params={**sale, "txid": "T2", "commission": "29,10"})

    [gross, net] = sorted(await fetch_all(db, conversions), key=lambda row: row["created_at"])
    assert (gross["value_minor"], net["value_minor"]) == (9700, 2910)
    without_net, with_net = await log_entries(db)
    assert without_net["details"]["value_note"] == NO_NET_VALUE
    assert "value_note" not in with_net["details"]


@pytest.mark.parametrize("alias", CURRENCY_ALIASES)
async def test_every_currency_alias_gives_the_currency(
    client: httpx.AsyncClient, db: AsyncEngine, alias: str
) -> None:
    shop = await open_generic(client, db)

    await client.get(
        "/pb", params={**shop.token, "click_id": shop.click_id, "payout": "12.5", alias: "usd"}
    )

    conversion = await only_conversion(db)
    assert (conversion["value_minor"], conversion["currency"]) == (1250, "USD")


@pytest.mark.parametrize("alias", TXID_ALIASES)
async def test_every_txid_alias_gives_the_transaction_id(
    client: httpx.AsyncClient, db: AsyncEngine, alias: str
) -> None:
    shop = await open_generic(client, db)
    params = {**shop.token, "click_id": shop.click_id, alias: "ORD-20240610-77"}

    first = await client.get("/pb", params=params)
    again = await client.get("/pb", params=params)

    assert [first.json()["status"], again.json()["status"]] == ["created", "duplicate"]
    assert (await only_conversion(db))["txid"] == "ORD-20240610-77"


async def test_the_first_alias_in_the_list_wins(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    shop = await open_generic(client, db)

    await client.get(
        "/pb",
        params={**shop.token, "subid": "not-ours", "click_id": shop.click_id, "amount": "1"},
    )

    assert (await only_conversion(db))["click_id"] == shop.click_id


async def test_a_field_path_set_by_the_user_is_read_before_the_presets(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(
        client, db, field_paths={"click_id": "aff_click", "value": "comissao.liquida"}
    )

    response = await client.post(
        shop.url,
        params=shop.token,
        json={
            "subid": "partner-77",  # the network's own sub id, not a click of ours
            "aff_click": shop.click_id,
            "payout": "100.00",
            "comissao": {"liquida": "61.30"},
            "txid": "N-1",
        },
    )

    assert response.json()["status"] == "created"
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["value_minor"]) == (shop.click_id, 6130)


async def test_a_field_path_with_a_digit_that_is_no_index_reads_nothing(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    # "²" is a digit to str.isdigit() but no list index: the path finds no value, not a 500.
    shop = await open_generic(client, db, field_paths={"value": "comissoes.²"})

    response = await client.post(
        shop.url,
        params=shop.token,
        json={"click_id": shop.click_id, "comissoes": ["61.30"], "payout": "100", "txid": "N-3"},
    )

    assert response.json()["status"] == "created"
    assert (await only_conversion(db))["value_minor"] == 10000


async def test_the_users_rules_come_before_the_presets_words(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    # This network sends status=1 for "waiting" and 2 for "paid"; the preset reads 1 as approved.
    rules = [
        {"when_status": "1", "event_type": "SALE", "status": "pending"},
        {"when_status": "2", "event_type": "SALE", "status": "approved"},
    ]
    shop = await open_generic(client, db, rules=rules)
    base = {**shop.token, "click_id": shop.click_id, "txid": "N-2", "payout": "40"}

    waiting = await client.get(shop.url, params={**base, "status": "1"})
    paid = await client.get(shop.url, params={**base, "status": "2"})

    assert [waiting.json()["conversion_status"], paid.json()["status"]] == [
        "pending",
        "status_changed",
    ]
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_the_users_rules_come_before_the_presets_rules(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    # The conservative choice: a Hotmart refund request counts as a refund straight away.
    rule = {"when_event": "PURCHASE_PROTEST", "event_type": "SALE", "status": "refunded"}
    shop = await open_shop(
        client,
        db,
        preset="hotmart",
        offer_url="https://pay.hotmart.com/X84725164L?sck={click_id}",
        click_param="sck",
        rules=[rule],
    )
    origin = {"sck": shop.click_id}

    await client.post(
        shop.url, params=shop.token, json=purchase("PURCHASE_APPROVED", "APPROVED", origin=origin)
    )
    protest = await client.post(
        shop.url, params=shop.token, json=purchase("PURCHASE_PROTEST", "DISPUTE", origin=origin)
    )

    assert (protest.json()["status"], protest.json()["conversion_status"]) == (
        "status_changed",
        "refunded",
    )


async def test_a_merchant_named_in_the_query_applies_its_preset(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_shop(
        client,
        db,
        preset="hotmart",
        offer_url="https://pay.hotmart.com/X84725164L?sck={click_id}",
        click_param="sck",
        key="hotmart-loja",
        secret=HOTTOK,
    )
    payload = purchase("PURCHASE_APPROVED", "APPROVED", origin={"sck": shop.click_id})

    response = await client.post(
        "/postback",
        params={**shop.token, "merchant": "hotmart-loja"},
        json=payload,
        headers={"X-HOTMART-HOTTOK": HOTTOK},
    )

    assert response.json()["status"] == "created"
    conversion = await only_conversion(db)
    assert (conversion["merchant_id"], conversion["txid"]) == (shop.merchant.id, "HP1121439028")
    [entry] = await log_entries(db)
    assert entry["merchant_id"] == shop.merchant.id


async def test_an_unknown_merchant_is_invalid_with_the_reason(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db)

    response = await client.get(
        "/pb", params={**shop.token, "merchant": "hotmrat", "click_id": shop.click_id}
    )

    assert response.status_code == 400
    assert response.json()["reason"].startswith("unknown merchant 'hotmrat'")
    assert await fetch_all(db, conversions) == []


async def test_the_merchant_of_the_clicks_campaign_applies_without_naming_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    rules = [{"when_status": "aguardando", "event_type": "SALE", "status": "pending"}]
    shop = await open_generic(client, db, secret=NETWORK_SECRET, rules=rules)
    await sell_through_merchant(db, shop)
    base = {**shop.token, "subid": shop.click_id, "txid": "C-1", "payout": "80"}

    unsigned = await client.get("/postback", params={**base, "status": "aguardando"})
    signed = await client.get(
        "/postback", params={**base, "status": "aguardando", "secret": NETWORK_SECRET}
    )

    assert (unsigned.status_code, unsigned.json()["status"]) == (401, "invalid")
    assert signed.json()["conversion_status"] == "pending"
    conversion = await only_conversion(db)
    assert conversion["merchant_id"] == shop.merchant.id
    assert [e["merchant_id"] for e in await log_entries(db)] == [shop.merchant.id] * 2


async def test_a_click_of_a_campaign_without_merchant_gets_the_generic_mapping(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, secret=NETWORK_SECRET)
    await sell_through_merchant(db, shop)
    other = await make_campaign(db, shop.workspace)
    other_click = await click_through(client, db, other, param="src")

    response = await client.get(
        "/postback", params={**shop.token, "subid": other_click, "txid": "G-1"}
    )

    assert response.json()["status"] == "created"
    conversion = await only_conversion(db)
    assert (conversion["merchant_id"], conversion["campaign_id"]) == (None, other.id)


@pytest.mark.parametrize(
    ("allowlist", "status_code", "outcome"),
    [
        (["203.0.113.0/24"], 403, "invalid"),
        (["2001:db8::/32"], 403, "invalid"),
        (["198.51.100.0/24"], 200, "created"),
        (["203.0.113.7", "198.51.100.23"], 200, "created"),
    ],
    ids=["other-network", "ipv6-only", "inside-network", "exact-address"],
)
async def test_the_ip_allowlist_admits_only_its_addresses(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    allowlist: list[str],
    status_code: int,
    outcome: str,
) -> None:
    shop = await open_generic(client, db, ip_allowlist=allowlist)

    response = await client.get(shop.url, params={**shop.token, "click_id": shop.click_id})

    assert (response.status_code, response.json()["status"]) == (status_code, outcome)
    [entry] = await log_entries(db)
    assert (entry["outcome"], entry["source_ip"]) == (outcome, "198.51.100.23")
    if status_code == 403:
        assert entry["reason"] == "IP 198.51.100.23 is not in the merchant's allowlist"
        assert await fetch_all(db, conversions) == []


async def test_a_wrong_secret_is_refused_and_flagged(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, secret=NETWORK_SECRET)

    response = await client.get(
        shop.url, params={**shop.token, "click_id": shop.click_id, "secret": "guess+1/2="}
    )

    assert (response.status_code, response.json()["status"]) == (401, "invalid")
    [entry] = await log_entries(db)
    assert entry["auth_failed"] is True
    await assert_log_keeps_no_secret(
        db, NETWORK_SECRET, "guess+1/2=", shop.workspace.postback_token
    )


async def test_the_secret_and_the_token_never_reach_the_log_however_encoded(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, secret=NETWORK_SECRET)

    as_query = await client.get(
        shop.url,
        params={**shop.token, "click_id": shop.click_id, "txid": "S-1", "secret": NETWORK_SECRET},
    )
    as_form = await client.post(
        shop.url,
        params=shop.token,
        data={"click_id": shop.click_id, "txid": "S-2", "secret": NETWORK_SECRET},
    )
    as_json = await client.post(
        shop.url,
        params=shop.token,
        json={"click_id": shop.click_id, "txid": "S-3", "secret": NETWORK_SECRET},
        headers={"x-network-secret": NETWORK_SECRET},
    )

    assert [r.json()["status"] for r in (as_query, as_form, as_json)] == ["created"] * 3
    await assert_log_keeps_no_secret(db, NETWORK_SECRET, shop.workspace.postback_token)


async def test_dedupe_by_click_counts_one_event_per_click(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, dedupe_mode="click")
    base = {**shop.token, "click_id": shop.click_id}

    sale = await client.get(shop.url, params={**base, "txid": "A", "payout": "10"})
    other_txid = await client.get(shop.url, params={**base, "txid": "B", "payout": "10"})
    lead = await client.get(shop.url, params={**base, "tipo": "lead"})

    assert [r.json()["status"] for r in (sale, other_txid, lead)] == [
        "created",
        "duplicate",
        "created",
    ]


async def test_dedupe_by_window_counts_one_event_per_click_within_the_window(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, dedupe_mode="window", dedupe_window_minutes=30)
    base = {**shop.token, "click_id": shop.click_id, "payout": "10"}

    first = await client.get(shop.url, params={**base, "txid": "A"})
    again = await client.get(shop.url, params={**base, "txid": "B"})

    assert [first.json()["status"], again.json()["status"]] == ["created", "duplicate"]
    assert len(await fetch_all(db, conversions)) == 1


async def test_allow_repeats_counts_every_postback_without_a_txid(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_generic(client, db, dedupe_mode="allow_repeats")
    base = {**shop.token, "click_id": shop.click_id, "tipo": "deposit", "payout": "50"}

    outcomes = [(await client.get(shop.url, params=base)).json()["status"] for _ in range(3)]
    with_txid = [
        (await client.get(shop.url, params={**base, "txid": "D-9"})).json()["status"]
        for _ in range(2)
    ]

    assert outcomes == ["created"] * 3
    assert with_txid == ["created", "duplicate"]
    assert len(await fetch_all(db, conversions)) == 4
