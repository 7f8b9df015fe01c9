"""The two catalogs hold the same texts, and every text the dashboard asks for exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import trilha
from trilha.conversions.dedupe import DedupeMode
from trilha.conversions.outcome import Outcome
from trilha.costs.models import CostModelKind
from trilha.custom_domains import DomainStatus
from trilha.dimensions import DIMENSIONS
from trilha.i18n import CATALOG_DIR, negotiate_locale, translator
from trilha.macros import BUILTIN_MACROS
from trilha.merchants import RULE_STATUSES
from trilha.money import ValueUnit
from trilha.postbacks.platforms import PRESETS
from trilha.postbacks.preset import FIELDS
from trilha.reconciliation.compare import Cause, Verdict
from trilha.reconciliation.export import COLUMNS as EXPORT_COLUMNS
from trilha.reconciliation.layouts import REQUIRED
from trilha.reports.dimensions import Dimension
from trilha.reports.home import Signal
from trilha.reports.metrics import METRIC_NAMES
from trilha.reports.periods import Preset
from trilha.web.dashboard.clicks import DEVICES
from trilha.workspaces import Role

SOURCE = Path(trilha.__file__).parent
LITERAL_KEY = re.compile(r"""\bt\(\s*["']([a-z_]+\.[a-z_0-9.]+)["']""")
SECTIONS = (
    "home",
    "reports",
    "campaigns",
    "sources",
    "merchants",
    "conversions",
    "postbacks",
    "domains",
    "settings",
)
FLASH_KEY = re.compile(r"""(?:redirect\(|flash=|key = )[^"\n]*"([a-z_]+\.[a-z_]+)\"""")


def _catalog(locale: str) -> dict[str, dict[str, str]]:
    catalog: dict[str, dict[str, str]] = json.loads(
        (CATALOG_DIR / f"{locale}.json").read_text(encoding="utf-8")
    )
    return catalog


def _used_keys() -> set[str]:
    keys: set[str] = set()
    for path in (SOURCE / "templates").rglob("*.html"):
        keys.update(LITERAL_KEY.findall(path.read_text(encoding="utf-8")))
    for path in (SOURCE / "web" / "dashboard").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        keys.update(re.findall(r'"([a-z_]+\.[a-z_]+)"', text))
    keys.update(f"nav.{section}" for section in SECTIONS)
    keys.update(f"role.{role.value}" for role in Role)
    keys.update(f"domain_status.{status.value}" for status in DomainStatus)
    keys.update(("status.active", "status.paused"))
    keys.update(f"outcome.{outcome.value}" for outcome in Outcome)
    keys.update(f"conversion_status.{status}" for status in RULE_STATUSES)
    keys.update(f"dedupe.{mode}" for mode in DedupeMode)
    keys.update(f"value_unit.{unit.value}" for unit in ValueUnit)
    keys.update(f"postback_field.{name}" for name in FIELDS)
    keys.update(f"dimension.{name}" for name in DIMENSIONS)
    keys.update(f"error.title_{status}" for status in (401, 403, 404, 409, 422))
    keys.update(f"reconciliation.verdict.{verdict.value}" for verdict in Verdict)
    keys.update(f"reconciliation.cause.{cause.value}" for cause in Cause)
    keys.update(f"reconciliation.column.{name}" for name in (*EXPORT_COLUMNS, *REQUIRED))
    keys.update(f"device.{device}" for device in DEVICES)
    keys.update(f"report_level.{dimension.value}" for dimension in Dimension)
    keys.update(f"metric.{name}" for name in METRIC_NAMES)
    keys.update(f"period.{preset.value}" for preset in Preset)
    keys.update(f"signal.{signal.value}" for signal in Signal)
    keys.update(f"preset_label.{name}" for name in PRESETS)
    keys.update(f"preset_setup.{name}" for name in PRESETS)
    keys.update(f"costs.model.{kind.value}" for kind in CostModelKind)
    # A prefix that a template completes ("reconciliation.verdict." ~ v) is no key.
    return {key for key in keys if not key.endswith((".html", ".json", ".py", ".csv", "."))}


def test_it_has_the_same_texts_in_both_languages() -> None:
    assert set(_catalog("pt-BR")["ui"]) == set(_catalog("en")["ui"])


def test_every_text_the_dashboard_uses_is_in_the_catalogs() -> None:
    missing = _used_keys() - set(_catalog("en")["ui"])
    assert not missing


def test_each_presets_english_label_and_setup_are_the_presets_own() -> None:
    # The API answers a preset's own setup text; the dashboard's English must say the same.
    ui = _catalog("en")["ui"]
    for name, preset in PRESETS.items():
        assert (ui[f"preset_label.{name}"], ui[f"preset_setup.{name}"]) == (
            preset.label,
            preset.setup,
        )


def test_every_built_in_macro_is_described() -> None:
    from trilha.web.dashboard.campaigns import macro_descriptions

    for locale in ("pt-BR", "en"):
        rows = macro_descriptions(translator(locale))
        assert [name for name, _ in rows] == list(BUILTIN_MACROS)
        assert all(not text.startswith("macro.") for _, text in rows)


def test_it_translates_domain_errors_with_their_numbers_and_values() -> None:
    t = translator("pt-BR")
    assert t.error("must be at most 120 characters") == "deve ter no máximo 120 caracteres"
    assert t.error("'cid' is mapped twice") == "'cid' aparece duas vezes"
    assert t.error("a message nobody translated") == "a message nobody translated"
    assert translator("en").error("must not be empty") == "must not be empty"


def test_it_picks_the_language_the_browser_prefers() -> None:
    assert negotiate_locale("en-GB,en;q=0.9") == "en"
    assert negotiate_locale("pt-BR,pt;q=0.9,en;q=0.8") == "pt-BR"
    assert negotiate_locale("de;q=0.9,en;q=0.5") == "en"
    assert negotiate_locale("de, fr") == "pt-BR"
    assert negotiate_locale(None) == "pt-BR"
    assert negotiate_locale("en;q=abc, pt") == "pt-BR"


NOT_FOUND = re.compile(r"""\bNotFound\(\s*f?"([^"]+)"\s*\)""")


def test_every_not_found_reads_in_portuguese() -> None:
    # What a 404 says is shown on the dashboard's error page, in the reader's language.
    messages = {
        re.sub(r"\{[^}]*\}", "", message)
        for path in SOURCE.rglob("*.py")
        for message in NOT_FOUND.findall(path.read_text(encoding="utf-8"))
    }
    assert len(messages) > 15
    t = translator("pt-BR")
    assert {message for message in messages if t.error(message) == message} == set()
