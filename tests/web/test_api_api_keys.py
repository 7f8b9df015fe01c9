"""/api-keys: the caller's keys. The secret is shown once; listings show only a prefix."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import bearer, make_caller
from trilha.db.schema import api_keys
from trilha.ids import hash_secret


async def test_it_shows_a_new_keys_secret_once(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller = await make_caller(db)

    created = await client.post(
        "/api/v1/api-keys", json={"name": "reporting script"}, headers=caller.headers
    )
    listed = await client.get("/api/v1/api-keys", headers=caller.headers)

    assert created.status_code == 201
    secret = created.json()["secret"]
    assert secret.startswith("trk_")
    assert created.json()["prefix"] == secret[:10]
    assert secret not in listed.text
    [new] = [key for key in listed.json() if key["name"] == "reporting script"]
    assert set(new) == {"id", "name", "prefix", "created_at", "last_used_at", "revoked_at"}
    [row] = await fetch_all(db, api_keys, id=new["id"])
    assert row["key_hash"] == hash_secret(secret)  # the secret itself is not stored
    assert secret not in row.values()


async def test_it_lets_the_new_key_call_the_api(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller = await make_caller(db)
    created = await client.post("/api/v1/api-keys", json={"name": "ci"}, headers=caller.headers)

    response = await client.get("/api/v1/me", headers=bearer(created.json()["secret"]))

    assert response.json()["id"] == caller.user.id


async def test_it_lists_only_the_callers_own_keys(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    other = await make_caller(db)

    response = await client.get("/api/v1/api-keys", headers=caller.headers)

    [own] = await fetch_all(db, api_keys, user_id=caller.user.id)
    assert [key["id"] for key in response.json()] == [own["id"]]
    assert other.user.id != caller.user.id


async def test_it_revokes_a_key_and_keeps_it_listed_as_revoked(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    created = await client.post("/api/v1/api-keys", json={"name": "old"}, headers=caller.headers)
    key_id = created.json()["id"]

    response = await client.delete(f"/api/v1/api-keys/{key_id}", headers=caller.headers)
    listed = await client.get("/api/v1/api-keys", headers=caller.headers)

    assert response.status_code == 204
    [old] = [key for key in listed.json() if key["id"] == key_id]
    assert old["revoked_at"] is not None
    assert (
        await client.get("/api/v1/me", headers=bearer(created.json()["secret"]))
    ).status_code == 401


async def test_it_answers_404_for_another_users_key(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    other = await make_caller(db)
    [theirs] = await fetch_all(db, api_keys, user_id=other.user.id)

    response = await client.delete(f"/api/v1/api-keys/{theirs['id']}", headers=caller.headers)

    assert response.status_code == 404
    [row] = await fetch_all(db, api_keys, id=theirs["id"])
    assert row["revoked_at"] is None


async def test_it_requires_a_name(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller = await make_caller(db)

    response = await client.post("/api/v1/api-keys", json={"name": "  "}, headers=caller.headers)

    assert response.status_code == 422
    assert response.json()["errors"] == {"name": "must not be empty"}
    assert len(await fetch_all(db, api_keys, user_id=caller.user.id)) == 1
