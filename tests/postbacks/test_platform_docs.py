"""Every preset has its page, linked from the postback page, naming every event it maps, with
a sample request its preset reads as a sale."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.postbacks.shop import only_conversion, open_shop
from trilha.postbacks.platforms import PRESETS

DOCS = Path(__file__).parent.parent.parent / "docs"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_has_a_platform_page(name: str) -> None:
    page = DOCS / "platforms" / f"{name}.md"

    assert page.is_file()
    assert page.read_text().startswith(f"# {PRESETS[name].label}\n")


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_postback_page_links_every_platform_page(name: str) -> None:
    assert f"(platforms/{name}.md)" in (DOCS / "postback.md").read_text()


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_event_and_status_a_preset_maps_is_in_its_table(name: str) -> None:
    text = (DOCS / "platforms" / f"{name}.md").read_text()
    for rule in PRESETS[name].rules:
        for word in (rule.when_event, rule.when_status):
            assert word is None or f"`{word}`" in text, word


@pytest.mark.parametrize("field", ["click_id", "event", "value", "currency", "txid"])
def test_every_generic_alias_is_documented(field: str) -> None:
    for page in (DOCS / "postback.md", DOCS / "platforms" / "generic.md"):
        for alias in PRESETS["generic"].paths[field]:
            assert f"`{alias}`" in page.read_text(), (page.name, alias)


SAMPLE_REQUEST = re.compile(r"^## Sample request\n.*?^```\n(.*?)\n```", re.S | re.M)


def documented_request(name: str, *, token: str, click_id: str) -> dict[str, Any]:
    """The page's sample request as httpx arguments, its placeholders filled: the workspace's
    token and a real click id (a secret or signature placeholder stays, the merchant has none).
    A form body is written one decoded field per line."""
    match = SAMPLE_REQUEST.search((DOCS / "platforms" / f"{name}.md").read_text())
    assert match, f"{name}.md has no sample request"
    text = match.group(1).replace("<workspace postback token>", token)
    text = text.replace("<click id>", click_id)
    head, _, body = text.partition("\n\n")
    request_line, *header_lines = head.splitlines()
    method, target = request_line.split(" ", 1)
    headers = dict(line.split(": ", 1) for line in header_lines)
    if headers.get("Content-Type") == "application/x-www-form-urlencoded":
        content = urlencode([tuple(line.split("=", 1)) for line in body.splitlines()]).encode()
    else:
        content = body.encode()
    return {"method": method, "url": target, "headers": headers, "content": content}


@pytest.mark.parametrize("name", sorted(PRESETS))
async def test_each_pages_sample_request_is_a_sale_its_preset_reads(
    client: httpx.AsyncClient, db: AsyncEngine, name: str
) -> None:
    shop = await open_shop(
        client,
        db,
        preset=name,
        key=name,
        offer_url="https://checkout.example/p?src={click_id}",
        click_param="src",
    )
    request = documented_request(name, token=shop.workspace.postback_token, click_id=shop.click_id)

    response = await client.request(**request)

    assert (response.status_code, response.json()["status"]) == (200, "created"), response.text
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["status"]) == (shop.click_id, "approved")
    assert conversion["value_minor"] > 0
