"""Setup link, sign-in and sign-out, CSRF, and the language switch, through a real browser."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from playwright.async_api import BrowserContext, Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account, sign_in
from tests.factories import PASSWORD, fetch_all, make_user, make_workspace
from trilha.accounts import create_setup_token
from trilha.db.schema import memberships, users, workspaces
from trilha.web.auth import SESSION_COOKIE

pytestmark = BROWSER


async def _setup_token(db: AsyncEngine) -> str:
    async with db.begin() as conn:
        return await create_setup_token(conn, now=datetime.now(UTC))


async def test_the_setup_link_creates_the_owner_and_signs_them_in(
    page: Page, db: AsyncEngine
) -> None:
    token = await _setup_token(db)

    await page.goto(f"/setup/{token}")
    await page.fill("#field-user_name", "Ana Souza")
    await page.fill("#field-email", "Ana@Example.com")
    await page.fill("#field-password", "uma senha bem longa")
    await page.fill("#field-name", "Loja da Ana")
    await page.click("#setup-submit")

    await expect(page.locator("#flash")).to_contain_text("Tudo pronto")
    await expect(page.locator("#workspace-switcher")).to_have_text("Loja da Ana")
    [user] = await fetch_all(db, users)
    assert (user["email"], user["name"], user["locale"]) == (
        "ana@example.com",
        "Ana Souza",
        "pt-BR",
    )
    [workspace] = await fetch_all(db, workspaces)
    assert page.url.endswith(f"/w/{workspace['id']}/campaigns")
    [membership] = await fetch_all(db, memberships)
    assert (membership["user_id"], membership["role"]) == (user["id"], "owner")


async def test_a_used_setup_link_is_refused(page: Page, db: AsyncEngine) -> None:
    token = await _setup_token(db)
    await page.goto(f"/setup/{token}")
    await page.fill("#field-email", "ana@example.com")
    await page.fill("#field-password", "uma senha bem longa")
    await page.fill("#field-name", "Loja da Ana")
    await page.click("#setup-submit")
    await expect(page.locator("#flash")).to_be_visible()

    response = await page.goto(f"/setup/{token}")

    assert response is not None
    assert response.status == 404
    await expect(page.locator("#setup-invalid")).to_contain_text("já foi usado")
    assert len(await fetch_all(db, users)) == 1


async def test_the_setup_form_asks_the_browser_for_a_new_long_password(
    page: Page, db: AsyncEngine
) -> None:
    token = await _setup_token(db)

    await page.goto(f"/setup/{token}")

    password = page.locator("#field-password")
    await expect(password).to_have_attribute("minlength", "10")
    await expect(password).to_have_attribute("autocomplete", "new-password")
    await expect(page.locator("#field-email")).to_have_attribute("autocomplete", "username")


async def test_a_rejected_setup_form_keeps_the_link_usable(page: Page, db: AsyncEngine) -> None:
    token = await _setup_token(db)
    await page.goto(f"/setup/{token}")
    await page.fill("#field-email", "ana@example.com")
    # The browser would stop a short password itself; the server must refuse it all the same.
    await page.eval_on_selector("#field-password", "field => field.removeAttribute('minlength')")
    await page.fill("#field-password", "curta")
    await page.fill("#field-name", "Loja da Ana")
    await page.click("#setup-submit")

    await expect(page.locator("#error-password")).to_have_text("deve ter pelo menos 10 caracteres")
    assert await fetch_all(db, users) == []
    await page.fill("#field-password", "uma senha bem longa")
    await page.click("#setup-submit")
    await expect(page.locator("#workspace-switcher")).to_have_text("Loja da Ana")


async def test_signing_in_and_out(page: Page, db: AsyncEngine) -> None:
    user = await make_user(db, email="bia@example.com")
    await make_workspace(db, owner=user, name="Afiliados Bia")

    await page.goto("/")
    assert "/login?next=/" in page.url
    await page.fill("#field-email", "bia@example.com")
    await page.fill("#field-password", PASSWORD)
    await page.click("#login-submit")
    await expect(page.locator("#workspace-switcher")).to_have_text("Afiliados Bia")

    await page.click(".user-menu summary")
    await page.click("#logout")

    await expect(page.locator("#login-submit")).to_be_visible()
    await expect(page.locator("#flash")).to_contain_text("Você saiu")
    await page.goto("/")
    assert "/login" in page.url


async def test_a_wrong_password_gets_a_generic_message(page: Page, db: AsyncEngine) -> None:
    await make_user(db, email="bia@example.com")

    await page.goto("/login")
    await page.fill("#field-email", "bia@example.com")
    await page.fill("#field-password", "not the password")
    await page.click("#login-submit")

    await expect(page.locator("#login-error")).to_have_text("E-mail ou senha incorretos.")
    await page.fill("#field-email", "nobody@example.com")
    await page.fill("#field-password", PASSWORD)
    await page.click("#login-submit")
    await expect(page.locator("#login-error")).to_have_text("E-mail ou senha incorretos.")
    cookies = {cookie["name"] for cookie in await page.context.cookies()}
    assert SESSION_COOKIE not in cookies


async def test_a_forged_post_without_the_csrf_token_is_refused(
    db: AsyncEngine, context: BrowserContext, live_server: str, owner: Account
) -> None:
    session = await sign_in(db, context, owner.user, live_server)
    url = f"{live_server}/w/{owner.workspace.id}/settings"

    async with httpx.AsyncClient(cookies={SESSION_COOKIE: session}) as client:
        response = await client.post(url, data={"name": "Hacked", "timezone": "UTC"})
        wrong = await client.post(url, data={"name": "Hacked", "csrf_token": "guess"})

    assert (response.status_code, wrong.status_code) == (403, 403)
    assert "CSRF" in response.text
    [workspace] = await fetch_all(db, workspaces)
    assert workspace["name"] == "Loja da Ana"


@pytest.mark.parametrize(
    ("charset", "part"),
    [("undefined", b"dona@example.com"), ("utf-7", b"+2AA-")],  # no decoder; a lone surrogate
)
async def test_a_form_whose_charset_gives_no_text_is_refused_not_failed(
    db: AsyncEngine,
    context: BrowserContext,
    live_server: str,
    owner: Account,
    charset: str,
    part: bytes,
) -> None:
    session = await sign_in(db, context, owner.user, live_server)
    body = b'--b\r\nContent-Disposition: form-data; name="name"\r\n\r\n' + part + b"\r\n--b--\r\n"

    async with httpx.AsyncClient(cookies={SESSION_COOKIE: session}) as client:
        response = await client.post(
            f"{live_server}/w/{owner.workspace.id}/settings",
            content=body,
            headers={"content-type": f"multipart/form-data; boundary=b; charset={charset}"},
        )

    assert response.status_code == 400
    [workspace] = await fetch_all(db, workspaces)
    assert workspace["name"] == "Loja da Ana"


async def test_the_language_switch_changes_to_english_and_is_remembered(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    await page.goto("/")
    await expect(page.locator("nav.sections")).to_contain_text("Campanhas")

    await page.click("#lang-en")

    await expect(page.locator("nav.sections")).to_contain_text("Campaigns")
    await expect(page.locator("html")).to_have_attribute("lang", "en")
    [user] = await fetch_all(db, users, id=owner.user.id)
    assert user["locale"] == "en"


async def test_the_sign_in_page_follows_the_browser_until_switched(
    english_context: BrowserContext,
) -> None:
    page = await english_context.new_page()
    await page.goto("/login")
    await expect(page.locator("h2")).to_have_text("Sign in")

    await page.click("#lang-pt")

    await expect(page.locator("h2")).to_have_text("Entrar")
    await page.fill("#field-email", "nobody@example.com")
    await page.fill("#field-password", PASSWORD)
    await page.click("#login-submit")
    await expect(page.locator("#login-error")).to_have_text("E-mail ou senha incorretos.")
