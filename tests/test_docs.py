"""The documentation covers every setting, macro, command and metric (datasette style)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from trilha.deliveries.outbox import Backlog
from trilha.macros import BUILTIN_MACROS
from trilha.metrics import exposition
from trilha.settings import Settings

DOCS = Path(__file__).parent.parent / "docs"


@pytest.mark.parametrize("name", sorted(Settings.model_fields))
def test_every_setting_is_documented(name: str) -> None:
    assert f"## `TRILHA_{name.upper()}`" in (DOCS / "settings.md").read_text()


@pytest.mark.parametrize("name", sorted(BUILTIN_MACROS))
def test_every_macro_is_documented(name: str) -> None:
    assert f"| `{{{name}}}` |" in (DOCS / "macros.md").read_text()


@pytest.mark.parametrize(
    "command", ["serve", "migrate", "user create", "workspace create", "apikey create"]
)
def test_every_command_is_documented(command: str) -> None:
    assert f"## `trilha {command}`" in (DOCS / "cli.md").read_text()


def test_every_page_the_readme_links_exists() -> None:
    readme = (DOCS.parent / "README.md").read_text()
    for line in readme.splitlines():
        for part in line.split("](")[1:]:
            target = part.split(")")[0]
            if not target.startswith("http"):
                assert (DOCS.parent / target).exists(), target


def _metrics() -> list[tuple[str, set[str]]]:
    """Each trilha metric as /metrics names it, with the labels of its series so far."""
    text = exposition(Backlog(depth=0, oldest_age=0.0)).decode()
    return [
        (
            family.name + ("_total" if family.type == "counter" else ""),
            {label for sample in family.samples for label in sample.labels} - {"le"},
        )
        for family in text_string_to_metric_families(text)
        if family.name.startswith("trilha_")
    ]


@pytest.mark.parametrize(("name", "labels"), _metrics())
def test_every_metric_is_documented_with_its_labels(name: str, labels: set[str]) -> None:
    [row] = [
        line
        for line in (DOCS / "operations.md").read_text().splitlines()
        if line.startswith(f"| `{name}` |")
    ]
    # A labelled series that nothing has counted yet (a report never run) shows no labels.
    assert labels <= set(re.findall(r"`(\w+)`", row.split("|")[3]))


def test_the_grafana_dashboard_shows_every_metric_and_no_other() -> None:
    dashboard = json.loads((DOCS.parent / "deploy" / "grafana-dashboard.json").read_text())
    expressions = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    named = {re.sub(r"_bucket$", "", n) for n in re.findall(r"\btrilha_\w+", expressions)}

    assert named == {name for name, _ in _metrics()}
