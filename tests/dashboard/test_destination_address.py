"""A destination on a private address is refused as it is saved, in the dashboard and the API,
naming the setting that allows it; nothing is stored. (The install here keeps the default:
deliveries reach public addresses only.)"""

from __future__ import annotations

import httpx
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.factories import fetch_all, make_api_key
from trilha.db.schema import destinations

pytestmark = BROWSER

SETTING = "TRILHA_DELIVERY_ALLOW_PRIVATE=true"


async def test_it_refuses_a_private_address_in_the_form_in_portuguese(
    page: Page, db: AsyncEngine, owner: Account
) -> None:
    workspace = owner.workspace
    await page.goto(f"/w/{workspace.id}/destinations/new")
    await page.fill("#field-name", "Tracker interno")
    await page.fill("#field-url", "http://localhost:8080/pb?cid={sub1}")
    await page.click("#destination-submit")

    error = page.locator("#error-url")
    await expect(error).to_contain_text("'localhost' aponta para '")
    await expect(error).to_contain_text("que não é um endereço público")
    await expect(error).to_contain_text(SETTING)
    await expect(page.locator("#field-url")).to_have_value("http://localhost:8080/pb?cid={sub1}")
    assert await fetch_all(db, destinations, workspace_id=workspace.id) == []

    await page.fill("#field-url", "https://tracker.example/pb?cid={sub1}")
    await page.click("#destination-submit")
    await expect(page.locator("#flash")).to_contain_text("Tracker interno")
    [saved] = await fetch_all(db, destinations, workspace_id=workspace.id)

    # An edit to a private address is refused too, and the stored URL stays.
    await page.fill("#field-url", "http://10.0.0.5/pb?cid={sub1}")
    await page.click("#destination-submit")
    await expect(page.locator("#error-url")).to_contain_text("'10.0.0.5' aponta para '10.0.0.5'")
    [kept] = await fetch_all(db, destinations, id=saved["id"])
    assert kept["url"] == "https://tracker.example/pb?cid={sub1}"


async def test_the_api_answers_422_naming_the_setting(
    db: AsyncEngine, owner: Account, live_server: str
) -> None:
    headers = {"authorization": f"Bearer {await make_api_key(db, owner.user)}"}
    path = f"{live_server}/api/v1/workspaces/{owner.workspace.id}/destinations"
    async with httpx.AsyncClient(headers=headers) as client:
        refused = await client.post(
            path, json={"name": "Hook", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}
        )
        made = await client.post(
            path, json={"name": "Hook", "kind": "webhook", "url": "https://crm.example/hook"}
        )
        changed = await client.put(
            f"{path}/{made.json()['id']}",
            json={"name": "Hook", "kind": "webhook", "url": "http://[::1]/hook"},
        )

    assert refused.status_code == 422, refused.text
    assert refused.json()["errors"] == {
        "url": "'127.0.0.1' resolves to '127.0.0.1', which is not a public address: trilha "
        f"sends to private addresses only when the server runs with {SETTING}"
    }
    assert made.status_code == 201, made.text
    assert changed.status_code == 422, changed.text
    assert SETTING in changed.json()["errors"]["url"]
    [stored] = await fetch_all(db, destinations, workspace_id=owner.workspace.id)
    assert stored["url"] == "https://crm.example/hook"
