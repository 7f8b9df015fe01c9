"""The documentation covers every setting, macro and command (datasette style)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trilha.macros import BUILTIN_MACROS
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
