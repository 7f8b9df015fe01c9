"""Reconciliation over the API: a platform's export (CSV or XLSX) against conversions made by
real postbacks, each verdict and likely cause, the columns remembered per merchant, the CSV for
Excel, and clear refusals of files that cannot be read."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import openpyxl
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, make_campaign
from tests.postbacks.shop import make_merchant
from tests.web.callers import Caller, make_owner
from trilha.db.schema import reconciliation_columns
from trilha.workspaces import Workspace

TODAY = datetime.now(UTC).astimezone(ZoneInfo("America/Sao_Paulo")).strftime("%d/%m/%Y")
HOTMART_HEADER = "Transação;Status;Valor de compra com impostos;Moeda;Data da transação"


def url(workspace: Workspace) -> str:
    return f"/api/v1/workspaces/{workspace.id}/reconciliations"


async def sale(client: httpx.AsyncClient, workspace: Workspace, **params: str) -> dict[str, Any]:
    """A postback from the merchant ``loja`` (generic), as its platform sends it."""
    query = {"token": workspace.postback_token, **params}
    answer: dict[str, Any] = (await client.get("/pb/loja", params=query)).json()
    return answer


async def upload(
    client: httpx.AsyncClient,
    caller: Caller,
    workspace: Workspace,
    merchant_id: str,
    content: bytes,
    name: str = "vendas.csv",
    **columns: str,
) -> httpx.Response:
    return await client.post(
        url(workspace),
        data={"merchant_id": merchant_id, **columns},
        files={"file": (name, content)},
        headers=caller.headers,
    )


async def shop_with_sales(
    client: httpx.AsyncClient, db: AsyncEngine
) -> tuple[Caller, Workspace, str]:
    """Sales recorded by postbacks: matched, refunded later, a value that differs, an orphan,
    an invalid postback, one the platform's file will not list, and a test sale."""
    owner, workspace = await make_owner(db)
    merchant = await make_merchant(db, workspace, preset="generic", key="loja")
    campaign = await make_campaign(db, workspace, slug="lp", merchant_id=merchant.id)
    clicks = []
    for _ in range(4):
        location = (await client.get(f"/r/{campaign.slug}")).headers["location"]
        clicks.append(httpx.URL(location).params["src"])
    await sale(client, workspace, click_id=clicks[0], txid="HP-1", payout="97,00")
    await sale(client, workspace, click_id=clicks[1], txid="HP-2", payout="197,00")
    await sale(client, workspace, click_id=clicks[2], txid="HP-3", payout="50,00")
    await sale(client, workspace, click_id="from-email", txid="HP-4", payout="30,00")
    invalid = await sale(client, workspace, click_id=clicks[3], txid="HP-5", payout="muito")
    assert invalid["status"] == "invalid"
    await sale(client, workspace, click_id=clicks[3], txid="HP-9", payout="10,00")
    # A body the generic mapping cannot read: its transaction id is only in the raw request.
    unread = await client.post(
        "/pb/loja",
        params={"token": workspace.postback_token},
        json={"purchase": {"transaction": "HP-8", "price": 10}},
    )
    assert unread.json()["status"] == "invalid"
    trial = await client.post(
        f"/api/v1/workspaces/{workspace.id}/merchants/{merchant.id}/test",
        json={"event_type": "SALE", "status": "approved", "value": "5.00", "txid": "TEST-1"},
        headers=owner.headers,
    )
    assert trial.json()["outcome"] == "orphan", trial.text  # a test sale: never reconciled
    return owner, workspace, merchant.id


def hotmart_export() -> bytes:
    rows = [
        HOTMART_HEADER,
        f"HP-1;Aprovado;97,00;BRL;{TODAY} 10:00:00",
        f"HP-2;Reembolsado;197,00;BRL;{TODAY} 10:05:00",
        f"HP-3;Aprovado;55,00;BRL;{TODAY} 10:10:00",
        f"HP-4;Aprovado;30,00;BRL;{TODAY} 10:15:00",
        f"HP-5;Aprovado;120,00;BRL;{TODAY} 10:20:00",
        f"HP-6;Completo;1.234,56;BRL;{TODAY} 10:25:00",
        f"HP-7;Coisa estranha;1,00;BRL;{TODAY} 10:30:00",
        f"HP-8;Aprovado;10,00;BRL;{TODAY} 10:35:00",
    ]
    return "\n".join(rows).encode("utf-8")


async def test_it_sorts_every_sale_and_explains_what_trilha_missed(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace, merchant_id = await shop_with_sales(client, db)

    response = await upload(client, owner, workspace, merchant_id, hotmart_export())

    assert response.status_code == 201, response.text
    result = response.json()
    lines = {line["txid"]: line for line in result["lines"]}
    verdicts = {txid: line["verdict"] for txid, line in lines.items()}
    assert verdicts == {
        "HP-1": "matched",
        "HP-2": "status_differs",
        "HP-3": "value_differs",
        "HP-4": "matched",
        "HP-5": "missing_in_trilha",
        "HP-6": "missing_in_trilha",
        "HP-8": "missing_in_trilha",
        "HP-9": "missing_in_platform",
    }
    assert (lines["HP-2"]["platform_status"], lines["HP-2"]["trilha_status"]) == (
        "refunded",
        "approved",
    )
    assert (lines["HP-3"]["platform_value"], lines["HP-3"]["trilha_value"]) == ("55.00", "50.00")
    assert lines["HP-4"]["is_orphan"] is True
    assert (lines["HP-5"]["cause"], lines["HP-5"]["postback_id"] is not None) == ("invalid", True)
    assert "not an amount" in lines["HP-5"]["reason"]
    assert (lines["HP-6"]["cause"], lines["HP-6"]["platform_value"]) == (
        "never_received",
        "1234.56",
    )
    assert result["counts"] == {
        "matched": 2,
        "missing_in_trilha": 3,
        "missing_in_platform": 1,
        "value_differs": 1,
        "status_differs": 1,
        "unreadable_rows": 1,
    }
    assert result["bad_rows"] == [{"row": 8, "reason": "unknown status 'Coisa estranha'"}]
    listed = (await client.get(url(workspace), headers=owner.headers)).json()
    assert [r["id"] for r in listed["reconciliations"]] == [result["id"]]


async def test_it_remembers_the_columns_chosen_for_a_merchant(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace, merchant_id = await shop_with_sales(client, db)
    own_layout = f"pedido,situacao,total,quando\nHP-1,pago,97.00,{TODAY}\n".encode()

    refused = await upload(client, owner, workspace, merchant_id, own_layout)
    chosen = await upload(
        client,
        owner,
        workspace,
        merchant_id,
        own_layout,
        txid_column="pedido",
        status_column="situacao",
        value_column="total",
        sold_at_column="quando",
    )
    again = await upload(client, owner, workspace, merchant_id, own_layout)

    assert refused.status_code == 422
    assert "pedido, situacao, total, quando" in refused.json()["errors"]["file"]
    assert chosen.status_code == 201, chosen.text
    assert again.status_code == 201
    assert again.json()["counts"]["matched"] == 1
    [stored] = await fetch_all(db, reconciliation_columns, merchant_id=merchant_id)
    assert stored["columns"]["txid"] == "pedido"


async def test_it_reads_an_xlsx_export_and_downloads_a_csv_for_excel(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace, merchant_id = await shop_with_sales(client, db)
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Transação", "Status", "Valor de compra com impostos", "Data da transação"])
    sheet.append(["HP-1", "Aprovado", 97.0, datetime.now(UTC).replace(tzinfo=None)])
    sheet.append(["HP-3", "Aprovado", 55.5, datetime.now(UTC).replace(tzinfo=None)])
    content = io.BytesIO()
    book.save(content)

    response = await upload(client, owner, workspace, merchant_id, content.getvalue(), "v.xlsx")
    assert response.status_code == 201, response.text
    csv = await client.get(f"{url(workspace)}/{response.json()['id']}/csv", headers=owner.headers)

    assert csv.status_code == 200
    assert csv.headers["content-type"] == "text/csv; charset=utf-8"
    assert csv.content.startswith("\ufeff".encode())
    text = csv.content.decode("utf-8-sig")
    header, *rows = text.split("\r\n")
    assert header.startswith("Resultado;Transação;Linha;Status na plataforma;Valor na plataforma")
    hp3 = next(row for row in rows if ";HP-3;" in row)
    assert hp3.startswith("Valor diferente;HP-3;3;approved;55,5;BRL;")
    assert ";50,00;BRL;" in hp3


async def test_it_refuses_files_it_cannot_read_with_a_reason(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace, merchant_id = await shop_with_sales(client, db)
    cases = {
        b"": "the file is empty",
        b"\xd0\xcf\x11\xe0old excel": "old .xls files cannot be read",
        b"PK\x03\x04not really a zip": "the spreadsheet cannot be read",
        b"only-one-column\nx\n": "the first row should name the columns",
        f"{HOTMART_HEADER}\nHP-1;Aprovado;muito;BRL;{TODAY}\n".encode(): "no row could be read",
    }
    for content, reason in cases.items():
        response = await upload(client, owner, workspace, merchant_id, content)
        assert response.status_code == 422, (content, response.text)
        assert reason in response.json()["errors"]["file"], response.json()

    unknown = await upload(client, owner, workspace, "NoSuchMerchant", hotmart_export())
    huge = await upload(client, owner, workspace, merchant_id, b"a,b\n" + b"x" * 6_000_000)

    assert unknown.status_code == 404
    assert huge.status_code == 413


async def test_a_merchants_export_columns_are_read_and_set_over_the_api(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    merchant = await make_merchant(db, workspace, preset="kiwify")
    columns_url = f"/api/v1/workspaces/{workspace.id}/merchants/{merchant.id}/export-columns"
    chosen = {"txid": "Pedido", "status": "Situação", "value": "Total", "sold_at": "Quando"}

    before = await client.get(columns_url, headers=owner.headers)
    put = await client.put(columns_url, json=chosen, headers=owner.headers)
    after = await client.get(columns_url, headers=owner.headers)
    blank = await client.put(columns_url, json={**chosen, "txid": ""}, headers=owner.headers)
    spaces = await client.put(
        columns_url, json={**chosen, "value": " \r\x1c"}, headers=owner.headers
    )

    assert before.json() == {"layout": "kiwify", "columns": None}
    assert put.status_code == 200
    assert after.json() == {"layout": "custom", "columns": {**chosen, "currency": ""}}
    assert blank.status_code == 422
    assert spaces.status_code == 422
    assert spaces.json()["errors"] == {"value": "Value error, names no column"}
    export = f"Pedido,Situação,Total,Quando\nK-1,paid,10.00,{TODAY}\n".encode()
    response = await upload(client, owner, workspace, merchant.id, export)
    assert response.status_code == 201, response.text
    assert response.json()["counts"]["missing_in_trilha"] == 1
