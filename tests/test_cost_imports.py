"""Reading a CSV of costs per day: limits before work, every bad line named at once."""

from __future__ import annotations

from datetime import date

import pytest

from trilha.costs.days import CostEntry
from trilha.costs.imports import MAX_BYTES, MAX_ERRORS, MAX_LINES, read_cost_csv
from trilha.errors import InvalidInput

SOURCES = {"Meta": "src1", "src1": "src1"}


def errors_of(data: bytes) -> dict[str, str]:
    with pytest.raises(InvalidInput) as refused:
        read_cost_csv(data, currency="BRL", sources=SOURCES)
    return refused.value.fields


def test_it_reads_brazilian_and_plain_amounts_dates_and_sources() -> None:
    data = (
        "\ufeffday;cost;impressions;source\n01/11/2026;1.234,56;25.000;Meta\n2026-11-02;0,0125;;\n"
    )

    entries = read_cost_csv(data.encode(), currency="BRL", sources=SOURCES)

    assert entries == [
        CostEntry(date(2026, 11, 1), "src1", 1_234_560000, 25000),
        CostEntry(date(2026, 11, 2), None, 12_500, None),
    ]


def test_it_names_every_bad_line_and_why() -> None:
    data = (
        b"day,cost\n"
        b"2026-11-01,10\n"
        b"2026-02-30,10\n"  # no such day
        b"2026-11-03,-5\n"
        b"2026-11-04,\n"  # neither cost nor impressions
        b"2026-11-01,3\n"  # the same day again
    )

    assert errors_of(data) == {
        "line 3, day": "'2026-02-30' is not YYYY-MM-DD or DD/MM/YYYY",
        "line 4, cost": "negative amount '-5'",
        "line 5": "cost: give a cost, impressions or both",
        "line 6": "this day (and source) is on an earlier line too",
    }


def test_it_refuses_a_header_it_cannot_read() -> None:
    assert set(errors_of(b"date;amount\n2026-11-01;1\n")) == {"line 1"}
    assert set(errors_of(b"day;source\n2026-11-01;Meta\n")) == {"line 1"}


def test_old_mac_line_ends_are_read() -> None:
    entries = read_cost_csv(b"day;cost\r2026-11-01;1\r", currency="BRL", sources=SOURCES)
    assert entries == [CostEntry(date(2026, 11, 1), None, 1_0000_00, None)]


def test_a_lone_line_end_or_an_open_quote_is_refused_not_a_crash() -> None:
    assert set(errors_of(b"\r0")) == {"line 1"}
    assert errors_of(b'day;cost\n"2026-11-01;1') == {"file": "is not a CSV file that can be read"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty"),
        (b"day;cost\n", "has no lines after the header"),
        (b"day;cost\n\xff\xfe", "is not UTF-8 text"),
        (b"x" * (MAX_BYTES + 1), f"is larger than {MAX_BYTES // 1000} kB"),
        (b"day;cost\n" + b"2026-11-01;1\n" * (MAX_LINES + 1), f"has more than {MAX_LINES} lines"),
    ],
)
def test_it_refuses_a_file_out_of_bounds_before_reading_its_lines(
    data: bytes, message: str
) -> None:
    assert errors_of(data) == {"file": message}


def test_it_reports_the_first_bad_lines_and_counts_the_rest() -> None:
    lines = "".join(f"2026-11-01;x{n}\n" for n in range(MAX_ERRORS + 7))

    errors = errors_of(f"day;cost\n{lines}".encode())

    assert len(errors) == MAX_ERRORS + 1
    assert errors["more"] == "7 more bad lines"


def test_a_dot_before_three_digits_reads_as_the_files_other_numbers_say() -> None:
    brazilian = "dia;custo;impressões\n2026-11-01;1.234;1.500\n2026-11-02;12,50;\n"
    elsewhere = "day;cost\n2026-11-01;1.234\n2026-11-02;12.50\n"
    grouped_count = "day;cost;impressions\n2026-11-01;1.234;25.000\n"

    def costs(data: str) -> list[int | None]:
        return [e.cost for e in read_cost_csv(data.encode(), currency="BRL", sources=SOURCES)]

    assert costs(brazilian) == [1234_000000, 12_500000]
    assert costs(elsewhere) == [1_234000, 12_500000]
    assert costs(grouped_count) == [1234_000000]


def test_a_cost_may_be_written_with_the_currency_symbol() -> None:
    data = "dia;custo\n2026-11-01;R$ 1.234\n2026-11-02;R$ 12,50\n"

    entries = read_cost_csv(data.encode(), currency="BRL", sources=SOURCES)

    assert [e.cost for e in entries] == [1234_000000, 12_500000]
    assert set(errors_of(b"day;cost\n2026-11-01;R$ 1.234\n")) == {"line 2, cost"}


def test_an_ambiguous_amount_is_refused_naming_its_line_and_column() -> None:
    unsettled = "dia;custo\n2026-11-01;1.234\n2026-11-02;310\n"
    disagreeing = "day;cost\n2026-11-01;1.234\n2026-11-02;12,50\n2026-11-03;12.50\n"

    assert errors_of(unsettled.encode()) == {
        "line 2, custo": "'1.234' is ambiguous: write 1234 if it is 1234, "
        "or 1.2340 if the '.' marks decimals"
    }
    assert set(errors_of(disagreeing.encode())) == {"line 2, cost"}


@pytest.mark.parametrize(
    ("cost", "units"),
    [("1.234,56", 1234_560000), ("1234.56", 1234_560000), ("1,234.56", 1234_560000)],
)
def test_an_amount_with_its_decimals_needs_nothing_else(cost: str, units: int) -> None:
    data = f'day,cost\n2026-11-01,"{cost}"\n'.encode()
    [entry] = read_cost_csv(data, currency="BRL", sources=SOURCES)
    assert entry.cost == units


@pytest.mark.parametrize(
    "header",
    ["dia;custo;impressões;fonte", "DIA;Custo;IMPRESSOES;Fonte", "Day;COST;Impressions;Source"],
)
def test_columns_are_named_in_english_or_portuguese_in_any_case(header: str) -> None:
    data = f"{header}\n01/11/2026;10;25.000;Meta\n".encode()
    entries = read_cost_csv(data, currency="BRL", sources=SOURCES)
    assert entries == [CostEntry(date(2026, 11, 1), "src1", 10_000000, 25000)]


def test_digits_other_than_0_to_9_are_refused() -> None:
    twelve, year = "\u0661\u0662", "\u0662\u0660\u0662\u0666"  # Arabic-Indic digits
    data = f"day;cost;impressions\n2026-11-01;{twelve};\n2026-11-02;;{twelve}\n{year}-11-03;1;\n"

    assert errors_of(data.encode()) == {
        "line 2, cost": f"{twelve!r} is not a number written with the digits 0 to 9",
        "line 3, impressions": f"{twelve!r} is not a number written with the digits 0 to 9",
        "line 4, day": f"'{year}-11-03' is not written with the digits 0 to 9",
    }
