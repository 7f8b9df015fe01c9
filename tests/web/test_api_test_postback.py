"""POST /workspaces/{id}/merchants/{id}/test: a request shaped like the platform's, through the
real pipeline, for every preset."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import Caller, make_member, make_owner
from tests.web.sales import click, create_merchant
from trilha.db.schema import conversions, postback_log
from trilha.postbacks.log import MASK
from trilha.postbacks.platforms import PRESETS, SAMPLES
from trilha.workspaces import Role, Workspace

SECRET = "platformSecret9Z"
SALE = {"event_type": "SALE", "status": "approved", "value": "97.00"}


async def send_test(
    client: httpx.AsyncClient,
    caller: Caller,
    workspace: Workspace,
    merchant: dict[str, Any],
    **fields: Any,
) -> httpx.Response:
    return await client.post(
        f"/api/v1/workspaces/{workspace.id}/merchants/{merchant['id']}/test",
        json={**SALE, **fields},
        headers=caller.headers,
    )


def test_every_preset_has_a_sample() -> None:
    assert list(SAMPLES) == list(PRESETS)


@pytest.mark.parametrize("preset", list(PRESETS))
async def test_a_test_postback_records_a_sale_on_the_click(
    client: httpx.AsyncClient, db: AsyncEngine, preset: str
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(
        client, owner, workspace, key=preset, preset=preset, secret=SECRET
    )
    campaign, click_id = await click(client, db, workspace)

    response = await send_test(client, owner, workspace, merchant, click_id=click_id, txid="T1")

    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["outcome"], answer["http_status"], answer["reason"]) == ("created", 200, "")
    assert (answer["event_type"], answer["status"]) == ("SALE", "approved")
    [conversion] = await fetch_all(db, conversions)
    assert conversion["id"] == answer["conversion_id"]
    assert (conversion["click_id"], conversion["campaign_id"]) == (click_id, campaign.id)
    assert (conversion["value_minor"], conversion["currency"], conversion["txid"]) == (
        9700,
        "BRL",
        "T1",
    )
    assert conversion["merchant_id"] == merchant["id"]
    [entry] = await fetch_all(db, postback_log)
    assert (entry["id"], entry["auth_failed"]) == (answer["postback_id"], False)
    assert entry["source_ip"] == "198.51.100.23"
    sent = answer["request"]
    assert (sent["path"], sent["query"].split("&")[0]) == (f"/pb/{preset}", f"token={MASK}")
    assert (sent["body"], sent["headers"]) == (entry["body"], entry["headers"])
    assert SECRET not in response.text
    assert workspace.postback_token not in response.text


@pytest.mark.parametrize("preset", list(PRESETS))
async def test_a_test_postback_without_a_click_is_an_orphan(
    client: httpx.AsyncClient, db: AsyncEngine, preset: str
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(client, owner, workspace, key="loja", preset=preset)

    response = await send_test(client, owner, workspace, merchant, status="pending", value="10")

    answer = response.json()
    assert (answer["outcome"], answer["status"]) == ("orphan", "pending")
    [conversion] = await fetch_all(db, conversions)
    assert conversion["click_id"] is None
    assert conversion["raw_click_id"].startswith("test-")
    assert conversion["txid"].startswith("TEST-")
    assert conversion["value_minor"] == 1000


async def test_a_later_status_changes_the_same_conversion(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(
        client, owner, workspace, key="k", preset="kiwify", secret=SECRET, value_choice="net"
    )
    _, click_id = await click(client, db, workspace)

    answers = [
        (
            await send_test(
                client, owner, workspace, merchant, click_id=click_id, txid="O1", status=status
            )
        ).json()
        for status in ("pending", "approved", "refunded")
    ]

    assert [a["outcome"] for a in answers] == ["created", "status_changed", "status_changed"]
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["status"], conversion["value_minor"]) == ("refunded", 8730)  # net: 90 %


@pytest.mark.parametrize(
    ("preset", "rule", "sent"),
    [
        ("hotmart", {"when_event": "PURCHASE_OUT_OF_SHOPPING_CART"}, '"event":"PURCHASE_OUT_OF_'),
        # Perfect Pay's status is a number; "²" passes str.isdigit() but int() refuses it.
        ("perfectpay", {"when_status": "²"}, '"sale_status_enum":"²"'),
    ],
)
async def test_it_speaks_the_merchants_own_rules(
    client: httpx.AsyncClient, db: AsyncEngine, preset: str, rule: dict[str, str], sent: str
) -> None:
    owner, workspace = await make_owner(db)
    rules = [{**rule, "event_type": "LEAD", "status": "approved"}]
    merchant = await create_merchant(client, owner, workspace, key="m", preset=preset, rules=rules)
    _, click_id = await click(client, db, workspace)

    response = await send_test(
        client, owner, workspace, merchant, click_id=click_id, event_type="lead", value="0"
    )

    answer = response.json()
    assert (answer["outcome"], answer["event_type"]) == ("created", "LEAD")
    assert sent in answer["request"]["body"].replace(" ", "")


async def test_it_refuses_a_sale_the_mapping_cannot_give(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(client, owner, workspace, key="e", preset="eduzz")

    chargeback = await send_test(client, owner, workspace, merchant, status="chargeback")
    currency = await send_test(client, owner, workspace, merchant, currency="XYZ")
    missing = await send_test(client, owner, workspace, merchant, status=None)

    assert chargeback.status_code == 422
    assert "no rule" in chargeback.json()["errors"]["status"]
    assert (currency.status_code, list(currency.json()["errors"])) == (422, ["currency"])
    assert (missing.status_code, list(missing.json()["errors"])) == (422, ["status"])
    assert await fetch_all(db, postback_log) == []


async def test_a_caller_outside_the_allowlist_gets_the_platforms_refusal(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(
        client, owner, workspace, key="t", preset="ticto", ip_allowlist=["203.0.113.0/24"]
    )

    response = await send_test(client, owner, workspace, merchant)

    answer = response.json()
    assert (answer["outcome"], answer["http_status"]) == ("invalid", 403)
    assert "allowlist" in answer["reason"]
    assert await fetch_all(db, conversions) == []
    assert len(await fetch_all(db, postback_log)) == 1


async def test_a_member_may_send_tests_to_their_workspaces_merchants_only(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    member = await make_member(db, workspace, Role.MEMBER)
    stranger, theirs = await make_owner(db)
    mine = await create_merchant(client, owner, workspace, key="g", preset="generic")
    their = await create_merchant(client, stranger, theirs, key="g", preset="generic")

    allowed = await send_test(client, member, workspace, mine)
    foreign = await send_test(client, member, workspace, their)

    assert allowed.json()["outcome"] == "orphan"
    assert foreign.status_code == 404
    assert len(await fetch_all(db, postback_log)) == 1


async def test_a_test_conversion_is_marked_and_only_it_can_be_deleted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await create_merchant(client, owner, workspace, key="loja", preset="generic")
    _, click_id = await click(client, db, workspace)
    test = (await send_test(client, owner, workspace, merchant, click_id=click_id)).json()
    real = await client.get(
        "/pb", params={"token": workspace.postback_token, "click_id": click_id, "txid": "R1"}
    )
    url = f"/api/v1/workspaces/{workspace.id}/conversions"

    listed = {
        c["id"]: c["is_test"]
        for c in (await client.get(url, headers=owner.headers)).json()["conversions"]
    }
    refused = await client.delete(f"{url}/{real.json()['conversion_id']}", headers=owner.headers)
    deleted = await client.delete(f"{url}/{test['conversion_id']}", headers=owner.headers)

    assert listed == {test["conversion_id"]: True, real.json()["conversion_id"]: False}
    assert refused.status_code == 409
    assert deleted.status_code == 204
    assert [c["id"] for c in await fetch_all(db, conversions)] == [real.json()["conversion_id"]]
    assert len(await fetch_all(db, postback_log)) == 2  # the log keeps what was sent
    gone = await client.delete(f"{url}/{test['conversion_id']}", headers=owner.headers)
    assert gone.status_code == 404
