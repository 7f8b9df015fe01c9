"""Properties of the postback payload parsers: query strings, forms with brackets, JSON bodies
and field paths. Each raises nothing but PayloadError, stays within MAX_FIELDS and MAX_DEPTH,
and reads back what a sender wrote."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trilha.postbacks.payload import (
    MAX_DEPTH,
    MAX_FIELDS,
    PayloadError,
    Tree,
    get_path,
    merge_query,
    pairs_to_tree,
    parse_body,
    parse_form,
)

# Text a sender can put in a request and a database can store: any character but a lone
# surrogate, which UTF-8 cannot carry, and NUL (the parsers refuse both: properties below).
TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=30)
QUERY_CHARS = st.sampled_from("ab=&%+[]._ 0123456789%2541~\x00é")
QUERY = st.text(QUERY_CHARS, max_size=80) | st.text(max_size=80)
KEY = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="[].\x00"), min_size=1)
LEAF = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=10)
FORM_TREE = st.recursive(
    LEAF,
    lambda children: st.dictionaries(KEY, children, min_size=1, max_size=4),
    max_leaves=30,
)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=40,
)
CONTENT_TYPES = st.sampled_from(
    [
        "",
        "application/json",
        "application/vnd.api+json",
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=utf-8",
        "text/plain",
        "multipart/form-data; boundary=b",
        "multipart/form-data",
        "application/xml",
    ]
)


def leaves(value: object) -> int:
    if isinstance(value, dict):
        return sum(leaves(child) for child in value.values())
    if isinstance(value, list):
        return sum(leaves(child) for child in value)
    return 1


def depth(value: object) -> int:
    if isinstance(value, dict | list):
        children = value.values() if isinstance(value, dict) else value
        return 1 + max((depth(child) for child in children), default=0)
    return 0


def flatten(tree: Tree, prefix: str = "") -> list[tuple[str, str]]:
    """The bracketed form fields a sender writes for a nested object."""
    pairs: list[tuple[str, str]] = []
    for name, value in tree.items():
        key = f"{prefix}[{name}]" if prefix else name
        if isinstance(value, dict):
            pairs.extend(flatten(value, key))
        else:
            pairs.append((key, value))
    return pairs


def body_fields(body: bytes, content_type: str) -> Tree:
    return asyncio.run(parse_body(body, content_type))


@given(QUERY)
def test_it_reads_any_query_string_as_parse_qsl_does(text: str) -> None:
    try:
        pairs = parse_form(text)
    except PayloadError:
        decoded = parse_qsl(text, keep_blank_values=True)
        holds_nul = any("\x00" in part for pair in decoded for part in pair)
        assert text.count("&") >= MAX_FIELDS or holds_nul
        return
    assert pairs == parse_qsl(text, keep_blank_values=True)
    assert len(pairs) <= MAX_FIELDS
    assert not any("\x00" in part for pair in pairs for part in pair)  # NUL is no text


@given(st.lists(st.tuples(TEXT, TEXT), max_size=20))
def test_it_reads_back_any_urlencoded_fields(pairs: list[tuple[str, str]]) -> None:
    assert parse_form(urlencode(pairs)) == pairs


@given(st.integers(min_value=MAX_FIELDS, max_value=MAX_FIELDS + 50))
def test_it_refuses_more_fields_than_the_limit_before_reading_them(count: int) -> None:
    text = "&".join(f"f{i}=%41" for i in range(count + 1))
    with pytest.raises(PayloadError, match=f"more than {MAX_FIELDS} fields"):
        parse_form(text)


@given(st.lists(st.tuples(st.text(QUERY_CHARS, max_size=20) | TEXT, TEXT), max_size=40))
def test_it_nests_any_pairs_within_the_limits_or_says_why_not(
    pairs: list[tuple[str, str]],
) -> None:
    try:
        tree = pairs_to_tree(pairs)
    except PayloadError:
        return
    assert leaves(tree) == len(pairs)
    assert depth(tree) <= MAX_DEPTH


@given(FORM_TREE.filter(lambda tree: isinstance(tree, dict) and depth(tree) <= MAX_DEPTH))
def test_it_reads_bracketed_form_fields_as_the_object_they_spell(tree: Tree) -> None:
    pairs = flatten(tree)

    assert pairs_to_tree(pairs) == tree
    assert pairs_to_tree(parse_form(urlencode(pairs))) == tree
    for key, value in pairs:
        assert get_path(tree, key.replace("][", ".").replace("[", ".").rstrip("]")) == value


def multipart(pairs: list[tuple[str, str]], boundary: str = "b0undary") -> bytes:
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in pairs
    ]
    return ("".join(parts) + f"--{boundary}--\r\n").encode()


@given(
    FORM_TREE.filter(lambda tree: isinstance(tree, dict) and depth(tree) <= MAX_DEPTH),
    st.sampled_from(["urlencoded", "multipart"]),
)
def test_it_reads_a_form_the_same_whatever_its_encoding(tree: Tree, encoding: str) -> None:
    pairs = [
        (name, value)
        for name, value in flatten(tree)
        if not any(char in name + value for char in '"\r\n\\%') and "b0undary" not in value
    ]
    if encoding == "urlencoded":
        body, content_type = urlencode(pairs).encode(), "application/x-www-form-urlencoded"
    else:
        body, content_type = multipart(pairs), "multipart/form-data; boundary=b0undary"

    assert body_fields(body, content_type) == pairs_to_tree(pairs)


@given(st.dictionaries(KEY, LEAF, max_size=20))
def test_it_reads_plain_fields_as_a_flat_object(fields: dict[str, str]) -> None:
    assert pairs_to_tree(list(fields.items())) == fields


@given(st.lists(TEXT, min_size=1, max_size=20))
def test_it_appends_empty_brackets_in_order(values: list[str]) -> None:
    tree = pairs_to_tree([("items[]", value) for value in values])

    assert tree == {"items": {str(i): value for i, value in enumerate(values)}}
    assert [get_path(tree, f"items.{i}") for i in range(len(values))] == values


@given(st.dictionaries(TEXT, TEXT, max_size=10), st.dictionaries(TEXT, TEXT, max_size=10))
def test_it_lets_body_fields_win_over_the_query_string(body: Tree, query: Tree) -> None:
    merged = merge_query(body, query)

    assert merged.keys() == body.keys() | query.keys()
    assert all(merged[name] == (body[name] if name in body else query[name]) for name in merged)


def nodes(value: object) -> list[object]:
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    )
    return [value, *(node for child in children for node in nodes(child))]


@given(JSON_VALUE, st.text(max_size=200) | st.text("data.0123[]x", max_size=200))
def test_it_finds_a_path_in_any_tree_or_answers_none(tree: object, path: str) -> None:
    root = {"data": tree}

    found = get_path(root, path)

    assert found is None or any(found is node for node in nodes(root))


@given(st.binary(max_size=300), CONTENT_TYPES)
def test_it_reads_any_bytes_or_says_why_not(body: bytes, content_type: str) -> None:
    try:
        tree = body_fields(body, content_type)
    except PayloadError:
        return
    assert isinstance(tree, dict)
    assert leaves(tree) <= MAX_FIELDS
    assert depth(tree) <= MAX_DEPTH + 1


@given(QUERY, CONTENT_TYPES)
def test_it_reads_any_text_body_or_says_why_not(text: str, content_type: str) -> None:
    try:
        tree = body_fields(text.encode("utf-8", "surrogatepass"), content_type)
    except PayloadError:
        return
    assert isinstance(tree, dict)
    assert leaves(tree) <= MAX_FIELDS


def as_sent(value: Any) -> Any:
    """A JSON value as the parser keeps it: numbers as their text, so no precision is lost."""
    if isinstance(value, dict):
        return {name: as_sent(child) for name, child in value.items()}
    if isinstance(value, list):
        return [as_sent(child) for child in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


@given(st.dictionaries(TEXT, JSON_VALUE, max_size=6))
def test_it_reads_back_any_json_object(document: dict[str, Any]) -> None:
    body = json.dumps(document).encode()

    assert body_fields(body, "application/json") == as_sent(document)
    assert body_fields(body, "") == as_sent(document)


@given(st.lists(JSON_VALUE, max_size=6))
def test_it_reads_a_json_array_as_its_items(items: list[Any]) -> None:
    assert body_fields(json.dumps(items).encode(), "application/json") == {"items": as_sent(items)}


@given(st.integers(min_value=MAX_DEPTH + 1, max_value=3000))
def test_it_refuses_json_nested_deeper_than_the_limit(levels: int) -> None:
    body = ('{"a":' * levels + "1" + "}" * levels).encode()
    with pytest.raises(PayloadError, match="nested"):
        body_fields(body, "application/json")


@given(
    st.sampled_from(["\\ud800", "\\udfff", "\\udbff\\u0041", "\\u0000", "a\\u0000b"]), st.booleans()
)
def test_it_refuses_json_escapes_that_are_no_text(escape: str, in_name: bool) -> None:
    body = (f'{{"{escape}": 1}}' if in_name else f'{{"a": ["{escape}"]}}').encode()
    with pytest.raises(PayloadError, match="NUL character or a lone UTF-16 surrogate"):
        body_fields(body, "application/json")


@given(TEXT, TEXT, st.sampled_from(["%00", "\x00"]), st.booleans())
def test_it_refuses_a_form_field_that_holds_a_nul(
    name: str, value: str, nul: str, in_name: bool
) -> None:
    field = (
        f"{quote(name)}{nul}={quote(value)}" if in_name else f"{quote(name)}={nul}{quote(value)}"
    )
    with pytest.raises(PayloadError, match="NUL character"):
        parse_form(field)
