"""A postback's fields as one tree, whatever the transport: query string, form, multipart or JSON.

Bracketed form keys (``venda[codigo]``, ``comissoes[0][valor]``) become nested objects, so that one
field path (``venda.codigo``) reads the same field sent as a form or as JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import Headers
from starlette.formparsers import MultiPartException, MultiPartParser

from trilha.postbacks.raw import RawPostback
from trilha.validation import NOT_TEXT, is_text

MAX_FIELDS = 1000
MAX_DEPTH = 16
PATH_CACHE_SIZE = 1024
BRACKETS = re.compile(r"\[([^\[\]]*)\]")

Tree = dict[str, Any]


class PayloadError(ValueError):
    """The body cannot be read as fields; the message is the postback's `invalid` reason."""


@dataclass(frozen=True, slots=True)
class Received:
    """A postback request with its body read as fields, or the reason it cannot be: all the
    pipeline needs from the body, ready before a transaction is taken."""

    raw: RawPostback
    body: Tree | PayloadError


async def parse_request(raw: RawPostback) -> Received:
    try:
        return Received(raw, await parse_body(raw.body, raw.content_type))
    except PayloadError as exc:
        return Received(raw, exc)


async def parse_body(body: bytes, content_type: str) -> Tree:
    """Fields of a request body by its content type; an empty body gives no fields."""
    if not body.strip():
        return {}
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "multipart/form-data":
        return pairs_to_tree(await _multipart_pairs(body, content_type))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise PayloadError("the body is not valid UTF-8") from None
    if (
        media == "application/json"
        or media.endswith("+json")
        or (not media and text.lstrip()[:1] in "{[")
    ):
        return parse_json(text)
    if media in ("application/x-www-form-urlencoded", "text/plain", ""):
        return pairs_to_tree(parse_form(text))
    raise PayloadError(f"unsupported content type {media[:60]!r}")


async def _multipart_pairs(body: bytes, content_type: str) -> list[tuple[str, str]]:
    async def stream() -> AsyncGenerator[bytes, None]:
        yield body

    parser = MultiPartParser(
        Headers({"content-type": content_type}), stream(), max_files=0, max_fields=MAX_FIELDS
    )
    try:
        form = await parser.parse()
    except (MultiPartException, UnicodeError) as exc:  # a charset may fail to decode a part
        raise PayloadError(f"malformed multipart body: {exc}") from None
    pairs = [(name, value) for name, value in form.multi_items() if isinstance(value, str)]
    await form.close()
    if not all(is_text(name) and is_text(value) for name, value in pairs):
        raise PayloadError(NOT_TEXT)  # a part's charset (UTF-7, say) gave a lone surrogate
    return pairs


def parse_json(text: str) -> Tree:
    try:
        value = json.loads(text, parse_float=str, parse_int=str, object_pairs_hook=_object)
    except RecursionError:
        raise PayloadError("the JSON is nested too deeply") from None
    except PayloadError:
        raise
    except json.JSONDecodeError as exc:
        raise PayloadError(f"malformed JSON: {exc.msg} at position {exc.pos}") from None
    except ValueError as exc:  # e.g. an integer with too many digits
        raise PayloadError(f"malformed JSON: {exc}") from None
    _check_shape(value, depth=0, budget=[MAX_FIELDS])
    if isinstance(value, list):
        return {"items": value}
    if not isinstance(value, dict):
        raise PayloadError("the JSON body is not an object")
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a name sent twice is an error, as a form field sent twice is."""
    found = dict(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise PayloadError(f"the field {name[:60]!r} is sent more than once")
            seen.add(name)
    return found


def _check_shape(value: object, *, depth: int, budget: list[int]) -> None:
    """Within the depth and field limits, and every name and string text (one walk)."""
    if depth > MAX_DEPTH:
        raise PayloadError(f"the JSON is nested deeper than {MAX_DEPTH} levels")
    children: Sequence[object]
    if isinstance(value, dict):
        if not all(is_text(name) for name in value):
            raise PayloadError(NOT_TEXT)
        children = list(value.values())
    elif isinstance(value, list):
        children = value
    else:
        if not is_text(value):
            raise PayloadError(NOT_TEXT)
        return
    budget[0] -= len(children)
    if budget[0] < 0:
        raise PayloadError(f"the body has more than {MAX_FIELDS} fields")
    for child in children:
        _check_shape(child, depth=depth + 1, budget=budget)


def _refuse_nul(pairs: list[tuple[str, str]]) -> None:
    for name, value in pairs:
        if "\x00" in name or "\x00" in value:
            shown = name.replace("\x00", "%00")[:40]
            raise PayloadError(
                f"the field {shown!r} holds a NUL character (%00), which is not text"
            )


def parse_form(text: str) -> list[tuple[str, str]]:
    """Name-value pairs of a query string or urlencoded body, at most MAX_FIELDS of them, as
    parse_qsl reads them (blank values kept); only text with ``%`` or ``+`` is decoded.

    >>> parse_form("a=1&b&&c=x+y%21")
    [('a', '1'), ('b', ''), ('c', 'x y!')]
    """
    if text.count("&") >= MAX_FIELDS:
        raise PayloadError(f"the request has more than {MAX_FIELDS} fields")
    if "%" in text or "+" in text:
        pairs = parse_qsl(text, keep_blank_values=True)
    else:
        pairs = []
        for piece in text.split("&"):
            if piece:
                name, _, value = piece.partition("=")
                pairs.append((name, value))
    if "%00" in text or "\x00" in text:
        _refuse_nul(pairs)
    return pairs


def pairs_to_tree(pairs: Sequence[tuple[str, str]]) -> Tree:
    """Nest bracketed keys; a key sent twice is an error, since which value counts is unclear.

    >>> pairs_to_tree([("venda[codigo]", "1"), ("venda[valor]", "97,00"), ("token", "x")])
    {'venda': {'codigo': '1', 'valor': '97,00'}, 'token': 'x'}
    """
    if len(pairs) > MAX_FIELDS:
        raise PayloadError(f"the request has more than {MAX_FIELDS} fields")
    tree: Tree = {}
    for key, value in pairs:
        head = key.split("[", 1)[0]
        parts = [head, *BRACKETS.findall(key[len(head) :])] if "[" in key else [key]
        if len(parts) > MAX_DEPTH:
            raise PayloadError(f"the field {key[:60]!r} is nested too deeply")
        node = tree
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            part = part or str(len(node))  # "items[]" appends
            existing = node.get(part)
            if last:
                if existing is not None:
                    raise PayloadError(f"the field {key[:60]!r} is sent more than once")
                node[part] = value
            else:
                if existing is None:
                    existing = node[part] = {}
                if not isinstance(existing, dict):
                    raise PayloadError(f"the field {key[:60]!r} is both a value and a group")
                node = existing
    return tree


def merge_query(body: Tree, query: Tree) -> Tree:
    """Body fields, plus the query string's where the body does not have them."""
    merged = dict(query)
    merged.update(body)
    return merged


def get_path(tree: Tree, path: str) -> Any:
    """The value at a dotted path; a literal key with dots or brackets is tried first.

    >>> get_path({"data": {"items": [{"id": "7"}]}}, "data.items.0.id")
    '7'
    """
    if path in tree:
        return tree[path]
    node: Any = tree
    for part in _path_parts(path):
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isascii() and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
        if node is None:
            return None
    return node


@dataclass(frozen=True, slots=True)
class PathIndex:
    """Paths by the top-level key each can start from (its first step, or the whole path as a
    literal key), so that a tree is read only at the paths it can hold: a postback's few keys
    are looked up instead of every path of every platform walked."""

    paths: tuple[str, ...]
    by_key: dict[str, tuple[int, ...]]
    # Top-level wildcards (``client_*``) by their prefix: present where a key starts with it.
    wildcards: tuple[tuple[str, int], ...]
    prefixes: tuple[str, ...]  # the wildcards' prefixes alone, all tried in one call

    def present(self, tree: Tree) -> list[str]:
        """The paths that may have a value in ``tree``, in their order.

        >>> index = path_index(("buyer.email", "data.buyer", "client_*", "x.y", "cus_*"))
        >>> index.present({"data": {}, "buyer.email": "a@b.c", "client_uf": "SP", "other": 1})
        ['buyer.email', 'data.buyer', 'client_*']
        """
        found: set[int] = set()
        by_key, prefixes = self.by_key, self.prefixes
        for key in tree:
            if key in by_key:
                found.update(by_key[key])
            if prefixes and key.startswith(prefixes):
                found.update(i for prefix, i in self.wildcards if key.startswith(prefix))
        paths = self.paths
        return [paths[i] for i in sorted(found)]


@lru_cache(maxsize=64)
def path_index(paths: tuple[str, ...]) -> PathIndex:
    by_key: dict[str, list[int]] = {}
    wildcards = []
    for i, path in enumerate(paths):
        first = _path_parts(path)[0]
        if first.endswith("*") and len(_path_parts(path)) == 1:
            wildcards.append((first[:-1], i))
            continue
        for key in {first, path}:
            by_key.setdefault(key, []).append(i)
    return PathIndex(
        paths,
        {k: tuple(v) for k, v in by_key.items()},
        tuple(wildcards),
        tuple(prefix for prefix, _ in wildcards),
    )


@lru_cache(maxsize=PATH_CACHE_SIZE)
def _path_parts(path: str) -> tuple[str, ...]:
    """A path's steps, split once: a postback reads the same few dozen paths as the last."""
    return tuple(path.replace("[", ".").replace("]", "").split("."))
