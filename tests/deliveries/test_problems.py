"""Why a delivery or a destination failed is stored in English, whole, for the log, and shown
in the reader's language by its kind, the stored detail after the sentence."""

from __future__ import annotations

import pytest

from trilha.deliveries.problems import PROBLEMS, Problem, explain, read_problem
from trilha.i18n import translator


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.key)
def test_each_kind_is_read_back_from_what_it_stores(problem: Problem) -> None:
    parts = dict.fromkeys(problem.pattern.groupindex, "Xyz")
    parts |= {"code": "404", "count": "10", "status": "refunded", "error": "ReadError"}
    stored = problem.say(**{name: parts[name] for name in problem.pattern.groupindex})
    assert read_problem(stored) == (problem.key, {n: parts[n] for n in problem.pattern.groupindex})


@pytest.mark.parametrize("locale", ["pt-BR", "en"])
def test_each_kind_has_a_sentence_in_both_languages(locale: str) -> None:
    t = translator(locale)
    assert {p.key for p in PROBLEMS if f"problem.{p.key}" not in t.ui} == set()


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        (
            "address check failed: localhost resolves to 127.0.0.1, which is not a public address",
            "O endereço não passou na verificação: localhost aponta para 127.0.0.1, "
            "que não é um endereço público",
        ),
        (
            "ConnectError: All connection attempts failed",
            "Não foi possível conectar ao destino: All connection attempts failed",
        ),
        (
            "10 rejections in a row; the last: HTTP 410",
            "10 recusas seguidas; a última: O destino respondeu HTTP 410",
        ),
        ("timed out", "Tempo esgotado: o destino não respondeu a tempo"),
        (
            "Meta is not told of refunded conversions",
            "Meta não recebe conversões com status Reembolsada",
        ),
        ("RemoteProtocolError", "Falha de rede (RemoteProtocolError)"),
    ],
)
def test_it_says_a_stored_problem_in_portuguese_with_its_detail(stored: str, shown: str) -> None:
    assert explain(translator("pt-BR"), stored) == shown


def test_a_text_of_no_known_kind_goes_through_the_error_catalog() -> None:
    t = translator("pt-BR")
    assert explain(t, "unknown macro {subid}") == "macro desconhecida {subid}"
    assert explain(t, "something new") == "something new"
