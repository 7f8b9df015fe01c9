"""Reconciliation in the browser: a month of Hotmart sales uploaded, each sale's verdict and the
likely cause of what trilha missed, the filters by verdict, the CSV download for Excel, and a
file without the expected columns refused under its field."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dashboard.conftest import BROWSER, Account
from tests.dashboard.sales import make_click, make_merchant, send_generic

pytestmark = BROWSER

TODAY = datetime.now(UTC).astimezone(ZoneInfo("America/Sao_Paulo")).strftime("%d/%m/%Y")


async def test_a_month_of_hotmart_sales_is_reconciled_and_downloaded(
    page: Page, db: AsyncEngine, owner: Account, live_server: str, tmp_path: Path
) -> None:
    merchant = await make_merchant(db, owner.workspace, name="Hotmart Cursos", preset="generic")
    _, click_id = await make_click(db, live_server, owner.workspace, merchant_id=merchant.id)
    await send_generic(live_server, owner.workspace, click_id=click_id, payout="97,00", txid="HP-1")
    await send_generic(live_server, owner.workspace, click_id=click_id, payout="x", txid="HP-2")
    export = tmp_path / "vendas.csv"
    export.write_text(
        "Transação;Status;Valor de compra com impostos;Data da transação\n"
        f"HP-1;Aprovado;97,00;{TODAY} 10:00\n"
        f"HP-2;Aprovado;197,00;{TODAY} 11:00\n"
        f"HP-3;Aprovado;47,00;{TODAY} 12:00\n",
        encoding="utf-8",
    )

    await page.goto(f"/w/{owner.workspace.id}/reconciliation")
    await page.set_input_files("#field-file", str(export))
    await page.click("#upload-submit")

    await expect(page.locator("#flash")).to_have_text("Conciliação feita.")
    lines = page.locator(".line")
    await expect(lines).to_have_count(3)
    await expect(page.locator(".line[data-txid='HP-1'] .badge").first).to_have_text("Confere")
    missing = page.locator(".line[data-txid='HP-2']")
    await expect(missing).to_contain_text("Falta no trilha")
    await expect(missing.locator(".cause")).to_contain_text("Postback inválido")
    await expect(page.locator(".line[data-txid='HP-3'] .cause")).to_contain_text(
        "Postback nunca recebido"
    )
    await page.click(".verdict-filter[data-verdict='missing_in_trilha']")
    await expect(lines).to_have_count(2)

    async with page.expect_download() as info:
        await page.click("#download")
    download = await info.value
    saved = tmp_path / "result.csv"
    await download.save_as(saved)
    data = saved.read_bytes()
    assert data.startswith("\ufeff".encode())
    assert "Confere;HP-1;2;approved;97,00;BRL;" in data.decode("utf-8-sig")

    await missing.locator(".cause-postback").click()
    await expect(page.locator("h2 .badge")).to_have_text("Inválido")


async def test_a_file_without_the_columns_is_refused_under_its_field(
    page: Page, db: AsyncEngine, owner: Account, tmp_path: Path
) -> None:
    await make_merchant(db, owner.workspace, name="Loja", preset="generic")
    export = tmp_path / "planilha.csv"
    export.write_text("pedido,quanto\n1,2\n", encoding="utf-8")

    await page.goto(f"/w/{owner.workspace.id}/reconciliation")
    await page.set_input_files("#field-file", str(export))
    await page.click("#upload-submit")

    error = page.locator("#error-file")
    await expect(error).to_contain_text("colunas não encontradas")
    await expect(error).to_contain_text("pedido, quanto")
