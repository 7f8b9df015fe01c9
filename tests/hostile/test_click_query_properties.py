"""Properties of the click's query parser: any query string is read, within MAX_PARAMS names of
at most MAX_NAME_LENGTH and values of at most MAX_VALUE_LENGTH characters, without NULs, as
urllib.parse.parse_qsl reads it (its fast path for text without ``%`` or ``+`` included)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from hypothesis import given
from hypothesis import strategies as st

from trilha.clicks import MAX_NAME_LENGTH, MAX_PARAMS, MAX_VALUE_LENGTH, query_params, read_query

QUERY = (
    st.text(st.sampled_from("ab=&%+0123456789cF;\x00é "), max_size=120)
    | st.text(max_size=120)
    | st.lists(st.tuples(st.text(max_size=80), st.text(max_size=2000)), max_size=80).map(urlencode)
)


def reference(query: str) -> tuple[dict[str, str], list[str]]:
    """What the parser promises, spelled out over parse_qsl: the parameters in the query's
    order, and the names of those whose name or value was cut."""
    params: dict[str, str] = {}
    cut: list[str] = []
    for name, value in parse_qsl(query, keep_blank_values=True):
        name = name.replace("\x00", "")
        name_cut = len(name) > MAX_NAME_LENGTH
        name = name[:MAX_NAME_LENGTH]
        if not name or name in params:
            continue
        if len(params) == MAX_PARAMS:
            break
        value = value.replace("\x00", "")
        if name_cut or len(value) > MAX_VALUE_LENGTH:
            cut.append(name)
        params[name] = value[:MAX_VALUE_LENGTH]
    return params, cut


@given(QUERY)
def test_it_reads_any_query_string_as_parse_qsl_does_within_the_limits(query: str) -> None:
    params, cut = read_query(query)

    expected, expected_cut = reference(query)
    assert list(params.items()) == list(expected.items())  # in the query's order
    assert cut == expected_cut
    assert query_params(query) == params
    assert len(params) <= MAX_PARAMS
    assert all(0 < len(name) <= MAX_NAME_LENGTH for name in params)
    assert all(len(value) <= MAX_VALUE_LENGTH for value in params.values())
    assert not any("\x00" in name or "\x00" in value for name, value in params.items())


@given(st.dictionaries(st.text(min_size=1, max_size=MAX_NAME_LENGTH), st.text(max_size=100)))
def test_it_reads_back_any_encoded_parameters(sent: dict[str, str]) -> None:
    sent = {name: value for name, value in sent.items() if "\x00" not in name + value}
    expected = dict(list(sent.items())[:MAX_PARAMS])

    assert query_params(urlencode(sent)) == expected
