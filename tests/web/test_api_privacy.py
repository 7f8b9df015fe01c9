"""Buyers' data (LGPD): masked in the postback log, hashed on conversions, kept in clear only by
the workspace's choice, forgotten on request, and emptied from payloads after the retention."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.postbacks.test_platform_hotmart import BUYER, approved, deliver, open_hotmart
from tests.web.callers import Caller, make_member
from trilha.db.schema import conversions, postback_log, unmatched_samples
from trilha.privacy.buyers import buyer_hashes, purge_payloads
from trilha.workspaces import Role

EMAIL_SHA256 = hashlib.sha256(b"marina.souza@example.com").hexdigest()
PHONE_SHA256 = hashlib.sha256(b"5511987654321").hexdigest()
IN_CLEAR = (
    "marina.souza@example.com",
    "Marina Souza",
    "11987654321",
    "39053344705",
    "Rua Coronel Quirino",
    "13025-320",
)


def stored_text(entry: dict[str, object]) -> str:
    return f"{entry['query']} {json.dumps(entry['headers'])} {entry['body']}"


async def test_it_masks_the_buyer_in_the_log_and_keeps_only_hashes_on_the_conversion(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)

    response = await deliver(client, shop, approved(shop))

    assert response.json()["status"] == "created"
    [entry] = await fetch_all(db, postback_log)
    assert [value for value in IN_CLEAR if value in stored_text(entry)] == []
    assert shop.click_id in entry["body"]  # what tracking needs stays readable
    assert "HP" in entry["body"]
    [conversion] = await fetch_all(db, conversions)
    assert conversion["buyer_email_sha256"] == EMAIL_SHA256
    assert conversion["buyer_phone_sha256"] == PHONE_SHA256
    async with db.connect() as conn:
        hashes = await conn.run_sync(buyer_hashes, shop.workspace.id, conversion["id"])
    assert (hashes.email_sha256, hashes.phone_sha256) == (EMAIL_SHA256, PHONE_SHA256)


async def test_a_workspace_may_keep_buyers_data_in_clear_with_a_warning(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    owner = await make_member(db, shop.workspace, Role.OWNER)
    url = f"/api/v1/workspaces/{shop.workspace.id}"

    changed = await client.patch(url, json={"keeps_buyer_data": True}, headers=owner.headers)
    await deliver(client, shop, approved(shop))

    assert changed.status_code == 200
    assert changed.json()["keeps_buyer_data"] is True
    assert "LGPD" in changed.json()["privacy_warning"]
    [entry] = await fetch_all(db, postback_log)
    assert "marina.souza@example.com" in entry["body"]
    [conversion] = await fetch_all(db, conversions)
    assert conversion["buyer_email_sha256"] == EMAIL_SHA256  # conversions never keep it in clear
    back = await client.patch(url, json={"keeps_buyer_data": False}, headers=owner.headers)
    assert (back.json()["keeps_buyer_data"], back.json()["privacy_warning"]) == (False, None)


async def forget(
    client: httpx.AsyncClient, owner: Caller, workspace_id: str, **buyer: str
) -> httpx.Response:
    return await client.post(
        f"/api/v1/workspaces/{workspace_id}/buyers/forget", json=buyer, headers=owner.headers
    )


async def test_forgetting_a_buyer_by_e_mail_erases_their_payloads_and_hashes(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    owner = await make_member(db, shop.workspace, Role.OWNER)
    await deliver(client, shop, approved(shop))
    other = approved(shop, transaction="HP999")
    other["data"]["buyer"] = {**BUYER, "email": "outra@example.com"}
    await deliver(client, shop, other)

    response = await forget(client, owner, shop.workspace.id, email="  Marina.Souza@Example.com ")

    assert response.status_code == 200
    assert response.json() == {
        "log_entries": 1,
        "conversions": 1,
        "delivery_attempts": 0,
        "clicks": 0,
        "unmatched_samples": 0,
    }
    entries = {e["txid"]: e for e in await fetch_all(db, postback_log)}
    assert (entries["HP1121439028"]["body"], entries["HP1121439028"]["query"]) == ("", "")
    assert entries["HP1121439028"]["outcome"] == "created"  # the entry and its fields stay
    assert entries["HP1121439028"]["payload_purged_at"] is not None
    assert entries["HP999"]["body"] != ""
    hashes = {c["txid"]: c["buyer_email_sha256"] for c in await fetch_all(db, conversions)}
    assert hashes["HP1121439028"] is None
    assert hashes["HP999"] == hashlib.sha256(b"outra@example.com").hexdigest()
    again = await forget(client, owner, shop.workspace.id, email="marina.souza@example.com")
    assert again.json() == {
        "log_entries": 0,
        "conversions": 0,
        "delivery_attempts": 0,
        "clicks": 0,
        "unmatched_samples": 0,
    }


async def test_forgetting_a_buyer_by_cpf_finds_them_where_kept_in_clear(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    owner = await make_member(db, shop.workspace, Role.OWNER)
    url = f"/api/v1/workspaces/{shop.workspace.id}"
    await client.patch(url, json={"keeps_buyer_data": True}, headers=owner.headers)
    await deliver(client, shop, approved(shop))

    response = await forget(client, owner, shop.workspace.id, cpf="390.533.447-05")

    assert response.json() == {
        "log_entries": 1,
        "conversions": 1,
        "delivery_attempts": 0,
        "clicks": 0,
        "unmatched_samples": 0,
    }
    [entry] = await fetch_all(db, postback_log)
    assert "39053344705" not in stored_text(entry)


async def test_forgetting_refuses_what_names_no_buyer(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    owner = await make_member(db, shop.workspace, Role.OWNER)
    member = await make_member(db, shop.workspace, Role.MEMBER)

    for buyer in (
        {},
        {"email": "no-at-sign"},
        {"cpf": "123.456.789-00"},
        {"email": "a@b.co", "cpf": "1"},
    ):
        response = await forget(client, owner, shop.workspace.id, **buyer)
        assert response.status_code == 422, buyer
    refused = await forget(client, member, shop.workspace.id, email="a@b.co")
    assert refused.status_code == 403


async def test_unmatched_samples_mask_buyers_and_are_forgotten(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    owner = await make_member(db, shop.workspace, Role.OWNER)

    await client.post("/pb?token=unknown", json={"buyer": {"name": "Marina Souza"}, "e": "x@y.com"})

    [sample] = await fetch_all(db, unmatched_samples)
    assert "Marina Souza" not in sample["body"]
    assert "x@y.com" not in sample["body"]
    async with db.begin() as conn:  # a sample stored before masking existed
        await conn.execute(update(unmatched_samples).values(body='{"e": "x@y.com"}'))
    response = await forget(client, owner, shop.workspace.id, email="X@y.com")
    assert response.json()["unmatched_samples"] == 1


async def test_old_payloads_are_emptied_while_their_entries_stay(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_hotmart(client, db)
    owner = await make_member(db, shop.workspace, Role.OWNER)
    await deliver(client, shop, approved(shop))
    now = datetime.now(UTC)

    async with db.begin() as conn:
        early = await conn.run_sync(
            purge_payloads, older_than=now - timedelta(days=30), now=now, limit=10
        )
        purged = await conn.run_sync(
            purge_payloads, older_than=now + timedelta(seconds=1), now=now, limit=10
        )

    assert (early, purged) == (0, 1)
    [entry] = await fetch_all(db, postback_log)
    assert (entry["query"], entry["headers"], entry["body"]) == ("", [], "")
    assert (entry["outcome"], entry["txid"], entry["status"]) == (
        "created",
        "HP1121439028",
        "approved",
    )
    detail = await client.get(
        f"/api/v1/workspaces/{shop.workspace.id}/postbacks/{entry['id']}", headers=owner.headers
    )
    assert detail.json()["payload_purged_at"] is not None
