"""Every dashboard page, with data on it, and every page an ad's visitor sees, speaks the
reader's language: no English text of the catalogs on a pt-BR page and no Portuguese one on an
English page, no domain reason or delivery problem left in English, no catalog key shown for
want of a text. The walk of every dashboard page is in tests/dashboard/test_every_page.py, with
the data put in place here."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.async_api import BrowserContext, Page
from sqlalchemy import insert, update
from sqlalchemy.exc import OperationalError
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
from trilha.db.schema import (
    campaigns,
    conversions,
    deliveries,
    delivery_attempts,
    destinations,
    notices,
    postback_log,
)
from trilha.deliveries.destinations import Spec, create_destination
from trilha.deliveries.kinds import Kind
from trilha.deliveries.problems import PROBLEMS
from trilha.i18n import CATALOG_DIR, PLACEHOLDER
from trilha.ids import new_id
from trilha.postbacks.trial import TrialSale, send_test_postback

pytestmark = BROWSER

MISSING_SECTIONS = ("clicks", "deliveries", "destinations", "reconciliation", "conversions")
MIN_FRAGMENT = 4  # shorter English pieces ("ID", "URL") are the same words in Portuguese
MIN_PROBLEM = 8  # a problem's stored words; "HTTP 404" reads the same in both languages
DEADLOCK_RETRIES = 5


def _catalog(locale: str) -> dict[str, dict[str, str]]:
    catalog: dict[str, dict[str, str]] = json.loads(
        (CATALOG_DIR / f"{locale}.json").read_text(encoding="utf-8")
    )
    return catalog


class Untranslated:
    """What text of the other language looks like on a ``reader``'s page, from the catalogs.

    A several-word text of the other language that the reader's says otherwise is found
    anywhere on the page (placeholders matching anything), and so is a domain reason the
    Portuguese catalog translates (``#`` matching anything): its English on a Portuguese page,
    its Portuguese on an English one. A one-word text ("Edit", "Editar") counts only as the
    whole of a text on the page, and only when no text of the reader's language uses that word
    itself ("Status"), so that data and shared words are not taken for it.
    """

    def __init__(self, reader: str = "pt-BR") -> None:
        other = "en" if reader == "pt-BR" else "pt-BR"
        own, foreign = _catalog(reader), _catalog(other)
        own_words = {w for text in own["ui"].values() for w in re.findall(r"\w+", text)}
        self.words: dict[str, str] = {}
        self.phrases: list[tuple[str, re.Pattern[str]]] = []
        for key, text in foreign["ui"].items():
            if own["ui"].get(key) == text:
                continue  # the same in both languages: a brand, a code, a URL
            pieces = [piece.strip() for piece in PLACEHOLDER.split(text)]
            if len(pieces) == 1 and re.fullmatch(r"\w+", pieces[0]):
                if pieces[0] not in own_words:
                    self.words[pieces[0]] = key
                continue
            if sum(len(piece) for piece in pieces) >= MIN_FRAGMENT:
                joined = r".{0,200}?".join(re.escape(piece) for piece in pieces)
                self.phrases.append((key, re.compile(r"\b" + joined)))
        for message, translation in _catalog("pt-BR")["errors"].items():
            if message != translation:
                shown = message if reader == "pt-BR" else translation
                pieces = [re.escape(piece) for piece in shown.split("#")]
                self.phrases.append((message, re.compile(r".{0,200}?".join(pieces))))
        if reader == "pt-BR":  # a delivery problem as stored, not said in the reader's words
            for problem in PROBLEMS:
                pieces = re.split(r"\{[a-z_]+\}", problem.template)
                if sum(len(piece.strip()) for piece in pieces) >= MIN_PROBLEM:
                    joined = r".{0,200}?".join(re.escape(piece) for piece in pieces)
                    self.phrases.append((problem.key, re.compile(joined)))
        sections = sorted({key.split(".", 1)[0] for key in own["ui"]})
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
        "workspace": workspace.id,
        "deliveries": [delivery["id"] for delivery in await fetch_all(db, deliveries)],
    }


async def upload_reconciliation(page: Page, workspace: str, merchant: str, tmp_path: Path) -> str:
    """A reconciliation of two sales; the path of its result."""
    today = datetime.now(UTC).astimezone(ZoneInfo("America/Sao_Paulo")).strftime("%d/%m/%Y")
    export = tmp_path / "vendas.csv"
    export.write_text(
        "Transação;Status;Valor de compra com impostos;Data da transação\n"
        f"HP-0001;Aprovado;97,00;{today} 10:00\nHP-9;Aprovado;197,00;{today} 11:00\n",
        encoding="utf-8",
    )
    await page.goto(f"{workspace}/reconciliation")
    await page.select_option("#field-merchant_id", merchant)
    await page.set_input_files("#field-file", str(export))
    await page.click("#upload-submit")
    await page.wait_for_selector("#flash")
    return "/" + page.url.split("/", 3)[3]


async def tell_of_problems(db: AsyncEngine, data: dict[str, Any]) -> None:
    """Delivery problems of each kind, as the worker stores them: on the destination, on its
    deliveries and their attempts, and in a notice. The live server's worker records its own
    attempts on the same deliveries meanwhile; PostgreSQL may end one of the two transactions
    as a deadlock, and the arrangement is then made again."""
    for attempt in range(DEADLOCK_RETRIES):
        try:
            await _tell_of_problems(db, data)
            return
        except OperationalError as exc:
            if "deadlock detected" not in str(exc) or attempt == DEADLOCK_RETRIES - 1:
                raise


async def _tell_of_problems(db: AsyncEngine, data: dict[str, Any]) -> None:
    async with db.begin() as conn:
        await conn.execute(
            update(destinations)
            .where(destinations.c.id == data["destination"])
            .values(
                status="inactive",
                status_reason="address check failed: tracker.example does not resolve",
            )
        )
        first, *others = data["deliveries"]
        await conn.execute(
            update(deliveries)
            .where(deliveries.c.id == first)
            .values(last_error="ConnectError: All connection attempts failed")
        )
        await conn.execute(
            update(deliveries)
            .where(deliveries.c.id.in_(others))
            .values(last_error="HTTP 500: redirect to https://tracker.example/, not followed")
        )
        await conn.execute(
            insert(delivery_attempts).values(
                id=new_id(),
                delivery_id=first,
                started_at=now(),
                request="GET https://tracker.example/pb",
                latency_ms=12,
                response="",
                error="timed out",
                outcome="temporary",
            )
        )
        await conn.execute(
            insert(notices).values(
                id=new_id(),
                workspace_id=data["workspace"],
                destination_id=data["destination"],
                message="Destination 'Keitaro' was switched off: "
                "10 rejections in a row; the last: HTTP 404",
                created_at=now(),
            )
        )


async def test_the_sign_in_page_is_in_portuguese(page: Page) -> None:
    await page.goto("/login")
    assert Untranslated("pt-BR").found_in(await visible_texts(page)) == []


async def test_the_check_finds_the_other_language_where_it_is(
    context: BrowserContext, english_context: BrowserContext
) -> None:
    # The same walk in the other language must find it: else it could never fail.
    english, portuguese = await english_context.new_page(), await context.new_page()
    await english.goto("/login")
    await portuguese.goto("/login")
    assert Untranslated("pt-BR").found_in(await visible_texts(english))
    assert Untranslated("en").found_in(await visible_texts(portuguese))


@pytest.mark.parametrize("language", ["pt-BR", "en"])
async def test_the_pages_an_ad_visitor_sees_are_in_the_visitors_language(
    context: BrowserContext,
    english_context: BrowserContext,
    db: AsyncEngine,
    owner: Account,
    live_server: str,
    language: str,
) -> None:
    campaign, _ = await make_click(db, live_server, owner.workspace, name="Pausada")
    async with db.begin() as conn:
        await conn.execute(
            update(campaigns).where(campaigns.c.id == campaign.id).values(status="paused")
        )
    page = await (context if language == "pt-BR" else english_context).new_page()
    untranslated = Untranslated(language)
    for path in ("/r/nao-existe", f"/r/{campaign.slug}"):
        response = await page.goto(path)
        assert response is not None, path
        assert response.status == 404, path
        texts = await visible_texts(page)
        assert texts, path
        assert untranslated.found_in(texts) == [], path
