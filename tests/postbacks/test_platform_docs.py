"""Every preset has its page, linked from the postback page, naming every event it maps."""

from __future__ import annotations

from pathlib import Path

import pytest

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
