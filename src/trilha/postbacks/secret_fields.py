"""Where a postback may carry a secret whatever its merchant: the fields and headers of every
preset, for the log to mask when no merchant of the workspace says which one applies."""

from __future__ import annotations

from typing import Final

from trilha.postbacks.payload import Tree, get_path, path_index
from trilha.postbacks.platforms import PRESETS
from trilha.postbacks.preset import AuthKind

KNOWN_SECRET_FIELDS: Final = tuple(
    sorted(
        {
            path
            for preset in PRESETS.values()
            for path in (*preset.paths.get("secret", ()), *preset.secret_names)
        }
    )
)
KNOWN_SECRET_HEADERS: Final = frozenset(
    {path.lower() for path in KNOWN_SECRET_FIELDS}
    | {p.auth_param.lower() for p in PRESETS.values() if p.auth is AuthKind.HMAC_SHA256_HEADER}
)


def values_at(paths: tuple[str, ...], payload: Tree, query: Tree) -> list[str]:
    """The text values at ``paths`` in the body's fields and in the query's."""
    index = path_index(paths)
    values = []
    for source in (payload, query):
        for path in index.present(source):
            value = get_path(source, path)
            if isinstance(value, str) and value:
                values.append(value)
    return values
