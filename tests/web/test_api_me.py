"""GET and PATCH /me: the caller's own account."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.web.callers import make_caller
from trilha.db.schema import users


async def test_it_tells_the_caller_who_they_are(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller = await make_caller(db)

    response = await client.get("/api/v1/me", headers=caller.headers)

    assert response.status_code == 200
    assert response.json() == {
        "id": caller.user.id,
        "email": caller.user.email,
        "name": "",
        "locale": "pt-BR",
    }


async def test_it_changes_the_callers_name_and_language(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)

    response = await client.patch(
        "/api/v1/me", json={"name": "  Ana Souza ", "locale": "en"}, headers=caller.headers
    )

    assert response.status_code == 200
    assert (response.json()["name"], response.json()["locale"]) == ("Ana Souza", "en")
    [row] = await fetch_all(db, users, id=caller.user.id)
    assert (row["name"], row["locale"]) == ("Ana Souza", "en")


async def test_it_keeps_fields_left_out_of_a_patch(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)
    await client.patch("/api/v1/me", json={"name": "Ana"}, headers=caller.headers)

    response = await client.patch("/api/v1/me", json={"locale": "en"}, headers=caller.headers)

    assert (response.json()["name"], response.json()["locale"]) == ("Ana", "en")


async def test_it_refuses_an_unknown_language_with_a_field_message(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)

    response = await client.patch("/api/v1/me", json={"locale": "fr"}, headers=caller.headers)

    assert response.status_code == 422
    assert response.json()["detail"] == "invalid input"
    assert "pt-BR" in response.json()["errors"]["locale"]
    [row] = await fetch_all(db, users, id=caller.user.id)
    assert row["locale"] == "pt-BR"


async def test_it_refuses_null_for_a_field_that_cannot_be_empty(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    caller = await make_caller(db)

    response = await client.patch("/api/v1/me", json={"name": None}, headers=caller.headers)

    assert response.status_code == 422
    assert response.json()["errors"] == {"name": "must not be null; leave it out to keep its value"}


async def test_it_refuses_unknown_fields(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    caller = await make_caller(db)

    response = await client.patch("/api/v1/me", json={"email": "x@y.z"}, headers=caller.headers)

    assert response.status_code == 422
    assert "email" in response.json()["errors"]
    [row] = await fetch_all(db, users, id=caller.user.id)
    assert row["email"] == caller.user.email
