"""One name for each thing: "Receita líquida" is net of refunds (home and reports), the amount a
platform pays out after its fee has a name of its own, and "Reprocessar" replays a postback
while a delivery tried again or a period sent to a destination say so in other words."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.browsers import signed_in
from tests.web.callers import make_owner
from trilha.app import TrilhaApp

CATALOGS = Path(__file__).parents[2] / "src" / "trilha" / "locale"


def _ui(locale: str) -> dict[str, str]:
    catalog: dict[str, dict[str, str]] = json.loads(
        (CATALOGS / f"{locale}.json").read_text(encoding="utf-8")
    )
    return catalog["ui"]


def test_net_revenue_is_the_only_net_in_portuguese() -> None:
    net = {key for key, text in _ui("pt-BR").items() if "líquid" in text.casefold()}
    assert net <= {"metric.net_revenue", "merchants.value_choice_help"}


def test_reprocessar_is_for_postbacks_and_reenviar_is_gone() -> None:
    ui = _ui("pt-BR")
    assert not [key for key, text in ui.items() if "reenvi" in text.casefold()]
    assert ui["postbacks.replay_one"] == "Reprocessar"
    words = {ui[key] for key in ("postbacks.replay_one", "deliveries.retry", "destinations.resend")}
    assert len(words) == 3


async def test_the_merchant_form_names_the_amount_after_the_fee(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    browser, _ = await signed_in(app, db, owner.user)
    async with browser:
        form = (await browser.get(f"/w/{workspace.id}/merchants/new")).text
    assert "Valor após a taxa da plataforma" in form
    assert "Receita líquida" not in form
    assert ">Líquido<" not in form


async def test_no_placeholder_looks_like_a_value_and_no_empty_rule_reads_as_set(
    app: TrilhaApp, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    browser, _ = await signed_in(app, db, owner.user)
    async with browser:
        merchant = (await browser.get(f"/w/{workspace.id}/merchants/new")).text
        destination = (await browser.get(f"/w/{workspace.id}/destinations/new")).text
        source = (await browser.get(f"/w/{workspace.id}/sources/new")).text
    for looks_set in ('placeholder="Hotmart"', 'placeholder="hotmart"', 'placeholder="203.0.113'):
        assert looks_set not in merchant
    assert 'class="rule-row"' not in merchant
    assert 'id="add-rule"' in merchant
    assert "Como a plataforma aparece nos relatórios" in merchant  # a label's help instead
    assert "203.0.113.7" in merchant  # the allowlist's format, in its help
    assert f'placeholder="{workspace.currency}"' not in destination
    assert 'placeholder="Keitaro"' not in destination
    assert 'placeholder="Facebook Ads"' not in source
