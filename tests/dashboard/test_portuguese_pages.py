"""Every dashboard page, with data on it, speaks Portuguese to a pt-BR browser: no English text
of the catalogs, no domain reason left in English, no catalog key shown for want of a text."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

import httpx
from playwright.async_api import BrowserContext, Page
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import (
    hotmart_sale,
    make_click,
    make_merchant,
    send_generic,
    send_hotmart,
)
from tests.factories import fetch_all, make_source, now
from tests.postbacks.test_platform_eduzz_v3 import invoice as eduzz_v3_invoice
from trilha.campaigns import ParamMapping
from trilha.conversions.status import Status
from trilha.db.schema import conversions, deliveries, destinations, postback_log
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.kinds import Kind
from trilha.i18n import CATALOG_DIR, PLACEHOLDER
from trilha.postbacks.platforms import PRESETS
from trilha.postbacks.trial import TrialSale, send_test_postback

pytestmark = BROWSER

MIN_FRAGMENT = 4  # shorter English pieces ("ID", "URL") are the same words in Portuguese


def _catalog(locale: str) -> dict[str, dict[str, str]]:
    catalog: dict[str, dict[str, str]] = json.loads(
        (CATALOG_DIR / f"{locale}.json").read_text(encoding="utf-8")
    )
    return catalog


class English:
    """What untranslated text looks like, from the catalogs.

    A several-word English text that Portuguese says otherwise is found anywhere on the page
    (placeholders matching anything), and so is a domain reason the Portuguese catalog
    translates (``#`` matching anything). A one-word English text ("Edit") counts only as the
    whole of a text on the page, and only when no Portuguese text uses that word itself
    ("Status"), so that data and shared words are not taken for it.
    """

    def __init__(self) -> None:
        en, pt = _catalog("en"), _catalog("pt-BR")
        portuguese_words = {w for text in pt["ui"].values() for w in re.findall(r"\w+", text)}
        self.words: dict[str, str] = {}
        self.phrases: list[tuple[str, re.Pattern[str]]] = []
        for key, text in en["ui"].items():
            if pt["ui"].get(key) == text:
                continue  # the same in both languages: a brand, a code, a URL
            pieces = [piece.strip() for piece in PLACEHOLDER.split(text)]
            if len(pieces) == 1 and re.fullmatch(r"\w+", pieces[0]):
                if pieces[0] not in portuguese_words:
                    self.words[pieces[0]] = key
                continue
            if sum(len(piece) for piece in pieces) >= MIN_FRAGMENT:
                joined = r".{0,200}?".join(re.escape(piece) for piece in pieces)
                self.phrases.append((key, re.compile(r"\b" + joined)))
        for message, translation in pt["errors"].items():
            if message != translation:
                pieces = [re.escape(piece) for piece in message.split("#")]
                self.phrases.append((message, re.compile(r".{0,200}?".join(pieces))))
        sections = sorted({key.split(".", 1)[0] for key in en["ui"]})
        # A catalog key shown as it is: the page asked for a text the catalog lacks.
        self.key = re.compile(r"\b(?:" + "|".join(sections) + r")\.[a-z_]+[a-z_.0-9]*\b")

    def found_in(self, texts: list[str]) -> list[str]:
        whole = "\n".join(texts)
        found = [
            f"{key!r}: {m.group(0)[:80]!r}" for key, p in self.phrases if (m := p.search(whole))
        ]
        found += [f"{self.words[t]!r}: {t!r}" for t in texts if t.rstrip(":") in self.words]
        return found + [f"key {m.group(0)!r}" for m in self.key.finditer(whole)]


async def visible_texts(page: Page) -> list[str]:
    """Each text of the page, as a reader sees it: its text nodes (of elements shown) and the
    placeholders, titles, labels and options. What is shown as code (a request as it was sent,
    a platform's own words) or marked translate="no" (a preset's field paths, such as
    Lastlink's `Event`) is the sender's, not the dashboard's: left out."""
    texts: list[str] = await page.evaluate(
        """() => {
            const texts = [];
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                const parent = node.parentElement;
                const skipped = 'script,style,template,code,pre,[translate=no]';
                if (!parent || parent.closest(skipped)) continue;
                if (!parent.checkVisibility()) continue;
                const text = node.textContent.trim();
                if (text) texts.push(text);
            }
            for (const e of document.querySelectorAll('[placeholder],[title],[aria-label]')) {
                if (e.closest('[translate=no]')) continue;
                for (const name of ['placeholder', 'title', 'aria-label']) {
                    const value = (e.getAttribute(name) || '').trim();
                    if (value) texts.push(value);
                }
            }
            for (const o of document.querySelectorAll('option')) texts.push(o.text.trim());
            return texts;
        }"""
    )
    return texts


async def put_data_in_place(db: AsyncEngine, account: Account, live_server: str) -> dict[str, Any]:
    """A source, a campaign on it, merchants, clicks, and postbacks of every outcome."""
    workspace = account.workspace
    source = await make_source(
        db,
        workspace,
        name="Facebook",
        params=(ParamMapping("ad_id", "ad_id"), ParamMapping("adset_id", "adset_id")),
    )
    hotmart = await make_merchant(db, workspace, secret=None)
    await make_merchant(db, workspace, key="loja", name="Loja", preset="generic")
    campaign, click_id = await make_click(
        db, live_server, workspace, name="Curso", source_id=source.id, merchant_id=hotmart.id
    )
    _, other_click = await make_click(db, live_server, workspace, name="Mentoria")
    async with db.begin() as conn:  # told of every sale: its deliveries and their log
        destination = await create_destination(
            conn,
            workspace,
            Spec(name="Keitaro", kind=Kind.POSTBACK, url="https://tracker.example/pb?s={sub1}"),
            now=now(),
        )
        # Active as if its address had been checked (tracker.example resolves nowhere).
        await conn.execute(
            update(destinations).where(destinations.c.id == destination.id).values(status="active")
        )
    url = f"{live_server}/pb/hotmart?token={workspace.postback_token}"
    await send_hotmart(url, hotmart_sale(click_id, hottok=None))  # created
    await send_hotmart(url, hotmart_sale(click_id, hottok=None))  # duplicate
    await send_hotmart(url, hotmart_sale(click_id, event="PURCHASE_REFUNDED", hottok=None))
    await send_hotmart(url, hotmart_sale(click_id, hottok=None))  # illegal: refunded → approved
    await send_hotmart(url, hotmart_sale(click_id, event="PURCHASE_PROTEST", hottok=None))
    async with httpx.AsyncClient() as client:  # an Eduzz v3 body sent to the Hotmart merchant
        await client.post(url, json=eduzz_v3_invoice("myeduzz.invoice_paid", code1=click_id))
    await send_generic(live_server, workspace, txid="G-1", payout="10")  # no click id
    await send_generic(live_server, workspace, click_id="nao-existe", txid="G-2")  # orphan
    await send_generic(live_server, workspace, click_id=other_click, txid="G-3", payout="1.234")
    await send_generic(live_server, workspace, click_id=other_click, txid="G-4", status="pending")
    await send_generic(live_server, workspace, click_id=other_click, txid="G-4", status="approved")
    async with db.begin() as conn:
        await send_test_postback(
            conn,
            workspace,
            hotmart.id,
            TrialSale("SALE", Status.APPROVED, value=Decimal("97")),
            source_ip="127.0.0.1",
            now=now(),
        )
    log = await fetch_all(db, postback_log)
    stored = await fetch_all(db, conversions)
    return {
        "source": source.id,
        "campaign": campaign.id,
        "merchant": hotmart.id,
        "click": click_id,
        "entries": [entry["id"] for entry in log],
        "conversions": [conversion["id"] for conversion in stored],
        "destination": destination.id,
        "deliveries": [delivery["id"] for delivery in await fetch_all(db, deliveries)],
    }


async def test_every_dashboard_page_with_data_is_in_portuguese(
    context: BrowserContext, db: AsyncEngine, owner: Account, live_server: str
) -> None:
    data = await put_data_in_place(db, owner, live_server)
    assert data["deliveries"], "the sales should have been told to the destination"
    w = f"/w/{owner.workspace.id}"
    paths = [
        "/",
        "/workspaces/new",
        w,
        f"{w}/reports",
        f"{w}/campaigns",
        f"{w}/campaigns/new",
        f"{w}/campaigns/{data['campaign']}",
        f"{w}/campaigns/{data['campaign']}/costs",
        f"{w}/sources",
        f"{w}/sources/new",
        f"{w}/sources/new?network=facebook",
        f"{w}/sources/{data['source']}",
        f"{w}/clicks",
        f"{w}/clicks/{data['click']}",
        f"{w}/merchants",
        f"{w}/merchants/new",
        *(f"{w}/merchants/new?preset={name}" for name in PRESETS),  # each one's setup text
        f"{w}/merchants/{data['merchant']}",
        f"{w}/postbacks",
        *(f"{w}/postbacks/{entry}" for entry in data["entries"]),
        f"{w}/conversions",
        *(f"{w}/conversions/{conversion}" for conversion in data["conversions"]),
        f"{w}/event-types",
        f"{w}/domains",
        f"{w}/reconciliation",
        f"{w}/destinations",
        f"{w}/destinations/new",
        f"{w}/destinations/{data['destination']}",
        f"{w}/deliveries",
        *(f"{w}/deliveries/{delivery}" for delivery in data["deliveries"]),
        f"{w}/settings",
    ]
    english = English()
    page = await context.new_page()
    problems = {}
    for path in paths:
        response = await page.goto(path)
        assert response is not None, path
        assert response.status == 200, path
        found = english.found_in(await visible_texts(page))
        if found:
            problems[path] = found
    assert not problems, json.dumps(problems, indent=1, ensure_ascii=False)


async def test_the_sign_in_page_is_in_portuguese(page: Page) -> None:
    await page.goto("/login")
    assert English().found_in(await visible_texts(page)) == []


async def test_the_check_finds_english_where_it_is(english_context: BrowserContext) -> None:
    # The same walk in English must find the catalog's English: else it could never fail.
    page = await english_context.new_page()
    await page.goto("/login")
    assert English().found_in(await visible_texts(page))
