"""Signing in to the dashboard: limits per e-mail and per address, and a server that keeps
answering clicks while passwords are checked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from ipaddress import ip_network

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import (
    PASSWORD,
    fetch_all,
    fetch_clicks,
    make_campaign,
    make_user,
    make_workspace,
)
from tests.web.browsers import CSRF, browser, post_form
from trilha.app import TrilhaApp, create_app
from trilha.db.schema import sessions, users
from trilha.settings import Settings

WRONG = "not the password"


async def _sign_in(
    app: TrilhaApp,
    email: str,
    password: str = WRONG,
    *,
    ip: str = "198.51.100.23",
    locale: str = "pt-BR",
) -> httpx.Response:
    return await post_form(
        app, "/login", {"email": email, "password": password, "next": "/"}, ip=ip, locale=locale
    )


def _limited(settings: Settings, **limits: int) -> Settings:
    return settings.model_copy(update={f"login_limit_{name}": n for name, n in limits.items()})


async def _started(settings: Settings) -> AsyncIterator[TrilhaApp]:
    app = create_app(settings)
    app.runtime.start()
    yield app
    await app.runtime.stop()


@pytest.fixture
async def strict_app(settings: Settings) -> AsyncIterator[TrilhaApp]:
    """The app with small limits: 3 failures per e-mail, 5 per address."""
    async for app in _started(_limited(settings, per_account=3, per_ip=5)):
        yield app


async def test_the_eleventh_wrong_password_for_an_account_gets_429_with_retry_after(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    await make_user(db, email="ana@example.com")

    failed = [await _sign_in(app, "ana@example.com") for _ in range(10)]
    refused = await _sign_in(app, "ana@example.com", PASSWORD)

    assert [response.status_code for response in failed] == [401] * 10
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["retry-after"]) <= 15 * 60
    assert "Muitas tentativas de entrar" in refused.text
    assert "trilha_session" not in refused.cookies
    assert await fetch_all(db, sessions) == []


async def test_unknown_e_mails_get_the_same_answers(strict_app: TrilhaApp, db: AsyncEngine) -> None:
    await make_user(db, email="ana@example.com")

    known = [(await _sign_in(strict_app, "ana@example.com")).status_code for _ in range(4)]
    unknown = [
        (await _sign_in(strict_app, "nobody@example.com", ip="203.0.113.80")).status_code
        for _ in range(4)
    ]

    assert known == unknown == [401, 401, 401, 429]


async def test_the_address_limit_counts_across_e_mails(strict_app: TrilhaApp) -> None:
    answers = [(await _sign_in(strict_app, f"guess{n}@example.com")).status_code for n in range(6)]
    elsewhere = await _sign_in(strict_app, "guess0@example.com", ip="203.0.113.80")

    assert answers == [401] * 5 + [429]
    assert elsewhere.status_code == 401


async def test_behind_a_trusted_proxy_the_visitors_address_is_limited(
    settings: Settings,
) -> None:
    behind_proxy = _limited(settings, per_account=100, per_ip=2).model_copy(
        update={"trusted_proxies": [ip_network("198.51.100.0/24")]}
    )

    async def guess(app: TrilhaApp, visitor: str) -> int:
        async with browser(app, ip="198.51.100.23") as client:  # the proxy
            response = await client.post(
                "/login",
                data={"csrf_token": CSRF, "email": "ana@example.com", "password": WRONG},
                headers={"x-forwarded-for": visitor},
            )
        return response.status_code

    async for app in _started(behind_proxy):
        first = [await guess(app, "203.0.113.7") for _ in range(3)]
        second = await guess(app, "203.0.113.8")

    assert first == [401, 401, 429]
    assert second == 401


async def test_the_limit_holds_across_processes_on_one_database(
    strict_app: TrilhaApp, settings: Settings, db: AsyncEngine
) -> None:
    await make_user(db, email="ana@example.com")

    async for other_app in _started(_limited(settings, per_account=3, per_ip=5)):
        answers = [
            (await _sign_in(app, "ana@example.com")).status_code
            for app in (strict_app, other_app, strict_app, other_app)
        ]

    assert answers == [401, 401, 401, 429]


async def test_the_limit_message_is_in_the_visitors_language(strict_app: TrilhaApp) -> None:
    for _ in range(3):
        await _sign_in(strict_app, "ana@example.com", locale="en")

    refused = await _sign_in(strict_app, "ana@example.com", locale="en")

    assert refused.status_code == 429
    assert "Too many sign-in attempts" in refused.text
    assert 'id="login-limited"' in refused.text


async def test_a_right_password_signs_in_and_does_not_count(
    strict_app: TrilhaApp, db: AsyncEngine
) -> None:
    await make_user(db, email="ana@example.com")

    answers = [(await _sign_in(strict_app, "ana@example.com", PASSWORD)) for _ in range(4)]
    failures = [(await _sign_in(strict_app, "ana@example.com")).status_code for _ in range(3)]

    assert [response.status_code for response in answers] == [303] * 4
    assert all("trilha_session" in response.cookies for response in answers)
    assert failures == [401] * 3


async def test_a_click_is_answered_while_passwords_are_being_checked(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="bf")
    user = await make_user(db, email="ana@example.com")
    # A hash that takes seconds to check, so that the click surely comes while it is checked.
    slow_hash = await asyncio.to_thread(PasswordHasher(time_cost=24).hash, PASSWORD)
    async with db.begin() as conn:
        await conn.execute(
            update(users).where(users.c.id == user.id).values(password_hash=slow_hash)
        )
    finished: list[str] = []

    async def sign_in() -> int:
        response = await _sign_in(app, "ana@example.com")
        finished.append("sign-in")
        return response.status_code

    async def click() -> int:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://testserver"
        ) as client:
            response = await client.get("/r/bf")
        finished.append("click")
        return response.status_code

    sign_ins = [asyncio.create_task(sign_in()) for _ in range(2)]
    await asyncio.sleep(0.5)  # the sign-ins have read their forms and are checking passwords
    clicked = await click()

    assert clicked == 302
    assert await asyncio.gather(*sign_ins) == [401, 401]
    assert finished == ["click", "sign-in", "sign-in"]
    assert len(await fetch_clicks(db)) == 1
