"""Properties of offer-URL macros: filling any template with any values raises nothing, expands
in one pass (a value holding ``{name}`` is never expanded), and every value reads back from the
part of the URL it landed in, without changing that URL's shape."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

from hypothesis import given
from hypothesis import strategies as st

from trilha.macros import MACRO, compile_template, fill_macros, origin_end

NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_.\-]{0,8}", fullmatch=True)
VALUE = st.text(st.characters(exclude_categories=["Cs"]), max_size=40) | NAME.map(
    lambda name: "{" + name + "}"
)
VALUES = st.dictionaries(NAME, VALUE, max_size=8)
TEMPLATE = st.lists(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=10)
    | NAME.map(lambda name: "{" + name + "}")
    | st.sampled_from(["?", "#", "&", "=", "/", "{", "}"]),
    max_size=20,
).map("".join)
# Macros in text without braces of its own: any brace in the filled URL is an unfilled macro's.
MACROS_IN_TEXT = st.lists(
    st.text(st.characters(exclude_categories=["Cs"], exclude_characters="{}"), max_size=10)
    | NAME.map(lambda name: "{" + name + "}"),
    max_size=20,
).map("".join)


@given(TEMPLATE)
def test_it_splits_any_template_into_the_text_it_was(template: str) -> None:
    compiled = compile_template(template)

    assert len(compiled.literals) == len(compiled.macros) + 1
    rebuilt = compiled.literals[0] + "".join(
        written + literal
        for (_, _, written), literal in zip(compiled.macros, compiled.literals[1:], strict=True)
    )
    assert rebuilt == template


@given(TEMPLATE.filter(lambda template: "%" not in template), VALUES)
def test_it_fills_each_macro_once_and_never_the_values_it_put_in(
    template: str, values: dict[str, str]
) -> None:
    # A macro in the scheme or authority (before origin_end) would choose where the URL leads:
    # it is never filled.
    end = origin_end(template)
    once = template[:end] + MACRO.sub(lambda m: values.get(m.group(1), m.group(0)), template[end:])

    assert unquote(fill_macros(template, values)) == once


@given(VALUES, MACROS_IN_TEXT)
def test_it_leaves_unknown_macros_as_written(values: dict[str, str], template: str) -> None:
    unknown = [m.group(0) for m in MACRO.finditer(template) if m.group(1) not in values]

    filled = fill_macros(template, values)

    assert [m.group(0) for m in MACRO.finditer(filled)] == unknown


@given(VALUE, VALUE, VALUE)
def test_a_value_reads_back_from_the_part_of_the_url_it_landed_in(
    in_path: str, in_query: str, in_fragment: str
) -> None:
    template = "https://pay.example.com/c/{p}/x?src={q}&k=1#f={f}"

    url = urlsplit(fill_macros(template, {"p": in_path, "q": in_query, "f": in_fragment}))

    assert (url.scheme, url.netloc) == ("https", "pay.example.com")
    [_, c, segment, x] = url.path.split("/")
    assert (c, unquote(segment), x) == ("c", in_path, "x")
    assert parse_qsl(url.query, keep_blank_values=True) == [("src", in_query), ("k", "1")]
    assert unquote(url.fragment) == f"f={in_fragment}"


def test_a_macro_where_the_url_leads_is_never_filled() -> None:
    """The example hypothesis found: a scheme-relative URL whose host is a macro."""
    assert fill_macros("//{A}", {"A": "evil.test"}) == "//{A}"
