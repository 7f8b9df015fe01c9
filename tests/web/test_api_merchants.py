"""/workspaces/{id}/merchants and /presets: sales-platform accounts; the secret is write-only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_workspace
from tests.web.callers import make_member, make_owner
from tests.web.sales import click, create_merchant
from trilha.db.schema import conversions, merchants
from trilha.postbacks.platforms import PRESETS
from trilha.workspaces import Role

SECRET = "hottok9Secret-Xq7w"


def merchants_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/merchants"


async def test_it_creates_a_merchant_and_never_answers_its_secret(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        merchants_url(workspace.id),
        json={"key": "Hotmart", "name": "Loja", "preset": "hotmart", "secret": SECRET},
        headers=owner.headers,
    )

    assert response.status_code == 201
    merchant = response.json()
    assert (merchant["key"], merchant["preset"], merchant["has_secret"]) == (
        "hotmart",
        "hotmart",
        True,
    )
    assert (merchant["value_choice"], merchant["dedupe_mode"], merchant["rules"]) == (
        "gross",
        "txid",
        [],
    )
    assert "secret" not in merchant
    assert SECRET not in response.text
    [row] = await fetch_all(db, merchants)
    assert row["secret"] == SECRET


async def test_it_answers_a_new_merchant_with_the_postback_url_to_paste(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        merchants_url(workspace.id),
        json={"key": "loja", "name": "Loja", "preset": "hotmart", "secret": SECRET},
        headers=owner.headers,
    )

    assert response.status_code == 201
    created = response.json()
    assert created["postback_url"] == f"http://testserver/pb/loja?token={workspace.postback_token}"
    assert created["setup"] == PRESETS["hotmart"].setup
    shown = await client.get(
        f"{merchants_url(workspace.id)}/{created['id']}", headers=owner.headers
    )
    assert shown.json() == created


async def test_it_lists_merchants_by_name_without_token_or_secret(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    for key, name in [("b", "Zeta"), ("a", "Alfa")]:
        await create_merchant(client, owner, workspace, key=key, name=name, preset="generic")
    await create_merchant(
        client, owner, workspace, key="k", name="Kiwi", preset="kiwify", secret=SECRET
    )

    response = await client.get(merchants_url(workspace.id), headers=owner.headers)

    assert response.status_code == 200
    assert [m["name"] for m in response.json()] == ["Alfa", "Kiwi", "Zeta"]
    assert workspace.postback_token not in response.text
    assert SECRET not in response.text
    assert "postback_url" not in response.json()[0]


async def test_it_shows_a_member_the_postback_url_to_paste_into_the_platform(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    member = await make_member(db, workspace, Role.MEMBER)
    created = await create_merchant(client, member, workspace, key="loja", preset="generic")
    _, click_id = await click(client, db, workspace)

    response = await client.get(
        f"{merchants_url(workspace.id)}/{created['id']}", headers=member.headers
    )
    url = response.json()["postback_url"]
    sale = await client.get(
        httpx.URL(url).copy_merge_params({"click_id": click_id, "txid": "T1", "payout": "10"})
    )

    assert url == f"http://testserver/pb/loja?token={workspace.postback_token}"
    assert response.json()["setup"] == PRESETS["generic"].setup
    assert sale.json()["status"] == "created", sale.json()
    [conversion] = await fetch_all(db, conversions)
    assert conversion["merchant_id"] == created["id"]


async def test_it_hides_the_postback_url_from_viewers(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    created = await create_merchant(client, owner, workspace, key="loja", preset="braip")

    response = await client.get(
        f"{merchants_url(workspace.id)}/{created['id']}", headers=viewer.headers
    )

    assert response.status_code == 200
    assert response.json()["postback_url"] is None
    assert response.json()["setup"] == PRESETS["braip"].setup
    assert workspace.postback_token not in response.text


async def test_it_changes_a_merchants_mapping_and_clears_its_secret(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    created = await create_merchant(
        client, owner, workspace, key="loja", preset="hotmart", secret=SECRET
    )
    rule = {
        "when_event": "PURCHASE_PROTEST",
        "when_status": None,
        "event_type": "sale",
        "status": "refunded",
    }

    changed = await client.patch(
        f"{merchants_url(workspace.id)}/{created['id']}",
        json={
            "rules": [rule],
            "field_paths": {"click_id": "data.purchase.origin.xcod"},
            "value_choice": "net",
            "ip_allowlist": ["203.0.113.0/24"],
            "dedupe_mode": "window",
            "dedupe_window_minutes": 30,
        },
        headers=owner.headers,
    )
    cleared = await client.patch(
        f"{merchants_url(workspace.id)}/{created['id']}",
        json={"secret": None, "value_unit": "cents"},
        headers=owner.headers,
    )

    assert changed.status_code == 200
    merchant = changed.json()
    assert merchant["rules"] == [{**rule, "event_type": "SALE"}]
    assert merchant["field_paths"] == {"click_id": "data.purchase.origin.xcod"}
    assert (merchant["value_choice"], merchant["ip_allowlist"]) == ("net", ["203.0.113.0/24"])
    assert (merchant["dedupe_mode"], merchant["dedupe_window_minutes"]) == ("window", 30)
    assert merchant["has_secret"] is True
    assert (cleared.json()["has_secret"], cleared.json()["value_unit"]) == (False, "cents")
    [row] = await fetch_all(db, merchants)
    assert (row["secret"], row["rules"][0]["status"]) == (None, "refunded")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"key": "Bad key!"}, "key"),
        ({"preset": "shopify"}, "preset"),
        ({"field_paths": {"colour": "x"}}, "field_paths.colour"),
        (
            {"rules": [{"when_event": "X", "event_type": "SALE", "status": "won"}]},
            "rules[0].status",
        ),
        ({"rules": [{"event_type": "SALE", "status": "approved"}]}, "rules[0]"),
        ({"ip_allowlist": ["not-an-ip"]}, "ip_allowlist"),
        ({"dedupe_window_minutes": 0}, "dedupe_window_minutes"),
        ({"dedupe_mode": "never"}, "dedupe_mode"),
        ({"name": None}, "name"),
        ({"colour": "blue"}, "colour"),
    ],
)
async def test_it_refuses_an_invalid_field_naming_it(
    client: httpx.AsyncClient, db: AsyncEngine, fields: dict[str, Any], field: str
) -> None:
    owner, workspace = await make_owner(db)
    created = await create_merchant(client, owner, workspace, key="loja", preset="generic")

    response = await client.patch(
        f"{merchants_url(workspace.id)}/{created['id']}", json=fields, headers=owner.headers
    )

    assert response.status_code == 422
    assert field in response.json()["errors"]
    [row] = await fetch_all(db, merchants)
    assert (row["key"], row["preset"], row["rules"]) == ("loja", "generic", [])


async def test_it_refuses_a_key_in_use(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)
    await create_merchant(client, owner, workspace, key="loja", preset="generic")

    response = await client.post(
        merchants_url(workspace.id),
        json={"key": "loja", "name": "Outra", "preset": "ticto"},
        headers=owner.headers,
    )

    assert response.status_code == 409
    assert "key" in response.json()["errors"]


async def test_it_deletes_a_merchant_keeping_its_conversions(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    created = await create_merchant(client, owner, workspace, key="loja", preset="generic")
    _, click_id = await click(client, db, workspace)
    await client.get("/pb/loja", params={"token": workspace.postback_token, "click_id": click_id})

    response = await client.delete(
        f"{merchants_url(workspace.id)}/{created['id']}", headers=owner.headers
    )
    again = await client.get(
        f"{merchants_url(workspace.id)}/{created['id']}", headers=owner.headers
    )

    assert response.status_code == 204
    assert again.status_code == 404
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["click_id"], conversion["merchant_id"]) == (click_id, None)


async def test_a_viewer_reads_merchants_but_cannot_change_them(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    viewer = await make_member(db, workspace, Role.VIEWER)
    created = await create_merchant(client, owner, workspace, key="loja", preset="generic")
    one = f"{merchants_url(workspace.id)}/{created['id']}"

    listed = await client.get(merchants_url(workspace.id), headers=viewer.headers)
    answers = [
        await client.post(
            merchants_url(workspace.id),
            json={"key": "x", "name": "X", "preset": "generic"},
            headers=viewer.headers,
        ),
        await client.patch(one, json={"name": "Nova"}, headers=viewer.headers),
        await client.delete(one, headers=viewer.headers),
        await client.post(
            f"{one}/test",
            json={"event_type": "SALE", "status": "approved", "value": "1"},
            headers=viewer.headers,
        ),
    ]

    assert listed.status_code == 200
    assert [a.status_code for a in answers] == [403, 403, 403, 403]
    assert len(await fetch_all(db, merchants)) == 1


async def test_it_hides_the_merchants_of_other_workspaces(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    stranger, theirs = await make_owner(db)
    created = await create_merchant(client, stranger, theirs, key="loja", preset="generic")

    shown = await client.get(
        f"{merchants_url(workspace.id)}/{created['id']}", headers=owner.headers
    )
    changed = await client.patch(
        f"{merchants_url(workspace.id)}/{created['id']}",
        json={"name": "Mine"},
        headers=owner.headers,
    )
    foreign = await client.get(merchants_url(theirs.id), headers=owner.headers)

    assert (shown.status_code, changed.status_code, foreign.status_code) == (404, 404, 404)
    assert shown.json() == {"detail": "merchant not found"}


async def test_it_lists_every_preset_with_what_it_reads(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, _ = await make_owner(db)

    response = await client.get("/api/v1/presets", headers=owner.headers)

    assert response.status_code == 200
    presets = {p["name"]: p for p in response.json()}
    assert list(presets) == list(PRESETS)
    kiwify = presets["kiwify"]
    assert (kiwify["auth"], kiwify["auth_param"], kiwify["value_unit"]) == (
        "hmac_sha1_query",
        "signature",
        "cents",
    )
    assert kiwify["field_paths"]["txid"] == ["order_id"]
    assert {
        "when_event": "order_approved",
        "when_status": None,
        "event_type": "SALE",
        "status": "approved",
    } in kiwify["rules"]
    assert all(p["setup"] and p["label"] for p in presets.values())


async def test_presets_need_an_api_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/presets")

    assert response.status_code == 401
