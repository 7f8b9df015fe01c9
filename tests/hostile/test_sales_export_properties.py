"""Properties of the sales-export reader: any bytes give a table or a FileError (never another
exception); a table written as CSV, with `,` or `;`, in UTF-8 with or without BOM or in
Windows-1252, or as XLSX, reads back cell for cell; every data row ends as a sale or a bad row
with its reason, and a sale's values are those the row wrote; the CSV written for Excel reads
back as the same lines."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import openpyxl
from hypothesis import example, given
from hypothesis import strategies as st

from trilha.conversions.status import Status
from trilha.reconciliation.compare import Line, Verdict
from trilha.reconciliation.export import COLUMNS, to_csv
from trilha.reconciliation.layouts import Columns
from trilha.reconciliation.sales import read_sales
from trilha.reconciliation.table import FileError, Table, read_table

# Cells as exports hold them: no NULs, no surrounding spaces (the reader trims them).
CELL = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="\x00"), max_size=20
).map(str.strip)
HEADER_NAME = (
    st.text("abcdefghijklmnopqrstuvwxyzçãéíõ ", min_size=1, max_size=12).map(str.strip).filter(bool)
)


@st.composite
def tables(draw: st.DrawFn, *, alphabet: st.SearchStrategy[str] = CELL) -> Table:
    header = draw(st.lists(HEADER_NAME, min_size=2, max_size=6, unique=True))
    width = len(header)
    rows = draw(
        st.lists(
            st.lists(alphabet, min_size=width, max_size=width).filter(any),
            max_size=8,
        )
    )
    return Table(tuple(header), tuple(tuple(row) for row in rows))


def as_csv(table: Table, delimiter: str) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(table.header)
    writer.writerows(table.rows)
    return out.getvalue()


@given(st.binary(max_size=2000))
@example(b"PK\x03\x04" + b"\x00" * 100)
@example(b"\xd0\xcf\x11\xe0")
@example(b'"a;b\n')
@example(b"a,b\r\n\x00,1")
def test_any_bytes_give_a_table_or_a_reason(data: bytes) -> None:
    try:
        table = read_table(data)
    except FileError as exc:
        reason = exc.fields["file"]
        assert reason.strip()
        return
    assert len(table.header) >= 2
    assert all(len(row) == len(table.header) for row in table.rows)


@given(tables(), st.sampled_from([",", ";"]), st.sampled_from(["utf-8", "utf-8-sig"]))
def test_a_csv_reads_back_cell_for_cell(table: Table, delimiter: str, encoding: str) -> None:
    assert read_table(as_csv(table, delimiter).encode(encoding)) == table


@given(tables(alphabet=st.text("abcçãéõ 0123456789-", max_size=12).map(str.strip)))
def test_a_windows_1252_csv_reads_back(table: Table) -> None:
    assert read_table(as_csv(table, ";").encode("cp1252")) == table


@given(tables(alphabet=st.text("abcxyz0123456789-_ç", max_size=12).map(str.strip)))
def test_an_xlsx_reads_back_cell_for_cell(table: Table) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(list(table.header))
    for row in table.rows:
        # Digits alone would come back as numbers, as Excel keeps them: keep them text.
        sheet.append([cell if not cell.isdigit() else f"n{cell}" for cell in row])
    content = io.BytesIO()
    book.save(content)
    expected = tuple(tuple(c if not c.isdigit() else f"n{c}" for c in row) for row in table.rows)

    assert read_table(content.getvalue()) == Table(table.header, expected)


SALE_ROW = st.tuples(
    st.text("ABCHP-0123456789", min_size=0, max_size=10),
    st.sampled_from(["Aprovado", "Reembolsado", "Chargeback", "Cancelado", "Pendente", "???"]),
    st.decimals(min_value=0, max_value=100000, places=2).map(lambda d: f"{d:.2f}".replace(".", ","))
    | st.text("abc xyz", max_size=6),  # no amount
    st.sampled_from(["31/05/2024 14:02", "2024-05-31T14:02:00-03:00", "ontem", ""]),
)


@given(st.lists(SALE_ROW, max_size=15))
def test_every_row_is_a_sale_or_a_bad_row_with_its_reason(
    rows: list[tuple[str, str, str, str]],
) -> None:
    table = Table(("t", "s", "v", "d"), tuple(rows))
    columns = Columns(txid="t", status="s", value="v", sold_at="d")

    read = read_sales(table, columns, timezone="America/Sao_Paulo", currency="BRL")

    assert len(read.sales) + len(read.bad_rows) == len(rows)
    assert all(bad.reason for bad in read.bad_rows)
    assert len({sale.txid for sale in read.sales}) == len(read.sales)
    for sale in read.sales:
        txid, status, value, _ = rows[sale.row - 2]
        assert sale.txid == txid
        assert sale.raw_status == status
        assert sale.value == Decimal(value.replace(".", "").replace(",", "."))
        assert sale.status in set(Status)
        assert sale.sold_at.tzinfo is not None


LINE = st.builds(
    Line,
    verdict=st.sampled_from(Verdict),
    txid=CELL.filter(bool),
    platform_value=st.none() | st.decimals(min_value=0, max_value=10**6, places=2),
    trilha_value=st.none() | st.decimals(min_value=0, max_value=10**6, places=2),
    sold_at=st.none() | st.datetimes(timezones=st.just(UTC), min_value=datetime(2000, 1, 1)),  # noqa: DTZ001 -- hypothesis takes naive bounds
)


@given(st.lists(LINE, max_size=10))
def test_the_csv_for_excel_reads_back_as_the_same_lines(lines: list[Line]) -> None:
    data = to_csv(lines, timezone="America/Sao_Paulo")

    assert data.startswith("\ufeff".encode())
    read = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""), delimiter=";"))
    assert len(read) == len(lines) + 1
    for line, row in zip(lines, read[1:], strict=True):
        fields = dict(zip(COLUMNS, row, strict=True))
        # A value Excel would take for a formula is quoted; any other as it is.
        assert fields["txid"] in (line.txid, f"'{line.txid}")
        for name in ("platform_value", "trilha_value"):
            value = getattr(line, name)
            assert fields[name] == ("" if value is None else format(value, "f").replace(".", ","))
