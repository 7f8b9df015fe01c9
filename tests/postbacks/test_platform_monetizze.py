"""Monetizze postback: a PHP form with bracket keys, the whole postback again as JSON in `json`,
`chave_unica` in the body, and the status as tipoEvento[codigo]."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all
from tests.postbacks.shop import (
    Shop,
    assert_log_keeps_no_secret,
    form_body,
    log_entries,
    only_conversion,
    open_shop,
    php_form,
    status_history,
)
from trilha.db.schema import conversions

CHAVE_UNICA = "7f3c9a1e5b2d8f4a6c0e1b3d5f7a9c2e"
SALE_CODE = "18274655"

EVENTS = {
    1: "Aguardando pagamento",
    2: "Finalizada / Aprovada",
    3: "Cancelada",
    4: "Devolvida (Reembolso)",
    5: "Bloqueada",
    6: "Completa",
    7: "Abandono de Checkout",
    99: "Boleto",
    101: "Assinatura - Ativa",
    103: "Assinatura - Cancelada",
    104: "Assinatura - Aguardando pagamento",
}
STATUS_TEXT = {
    1: "Aguardando pagamento",
    2: "Finalizada",
    3: "Cancelada",
    4: "Devolvida",
    5: "Bloqueada",
    6: "Completa",
}


def postback(
    code: int,
    *,
    src: str,
    sale_code: str | None = SALE_CODE,
    status: str | None = None,
    value: str = "1457.00",
    boleto: bool = False,
) -> dict[str, Any]:
    """What Monetizze posts to the producer (tipoPostback 2) for event ``code``."""
    return {
        "chave_unica": CHAVE_UNICA,
        "tipoPostback": {"codigo": "2", "descricao": "Produtor"},
        "tipoEvento": {"codigo": str(code), "descricao": EVENTS[code]},
        "produto": {
            "codigo": "112233",
            "chave": "a1b2c3d4e5",
            "nome": "Planilha Financeira Pro",
            "categoria": "Finanças e Investimentos",
        },
        "venda": {
            "codigo": sale_code,
            "plano": "P9QX21",
            "cupom": "",
            "dataInicio": "2024-06-10 14:02:11",
            "dataFinalizada": "2024-06-10 14:03:40" if code == 2 else "",
            "meioPagamento": "Boleto" if boleto else "Cartão de Crédito",
            "formaPagamento": "Boleto" if boleto else "Cartão de crédito",
            "garantiaRestante": "7",
            "status": status if status is not None else STATUS_TEXT.get(code, ""),
            "valor": value,
            "quantidade": "1",
            "tipo_frete": "",
            "frete": "",
            "onebuyclick": "0",
            "venda_upsell": "",
            "src": src,
            "utm_source": "facebook",
            "utm_medium": "cpc",
            "utm_content": "criativo-12",
            "utm_campaign": "planilha-junho",
            "valorRecebido": "1268.43",
            "parcelas": "1",
            "linkBoleto": "https://app.monetizze.com.br/boleto/18274655" if boleto else "",
            "linha_digitavel": "34191.79001 01043.510047 91020.150008 1 97540000145700"
            if boleto
            else "",
        },
        "comissoes": [
            {
                "refAfiliado": "",
                "nome": "Finanças Claras LTDA",
                "tipo_comissao": "Produtor",
                "valor": "1268.43",
                "porcentagem": "87.06",
                "email": "contato@financasclaras.example",
            }
        ],
        "comprador": {
            "nome": "Joana Prado",
            "email": "joana.prado@example.com",
            "data_nascimento": "1988-03-14",
            "cnpj_cpf": "11144477735",
            "telefone": "(41) 99876-5432",
            "cep": "80010-000",
            "endereco": "Rua XV de Novembro",
            "numero": "700",
            "complemento": "",
            "bairro": "Centro",
            "cidade": "Curitiba",
            "estado": "PR",
            "pais": "Brasil",
            "ip": "189.4.77.12",
            "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X)",
        },
        "produtor": {
            "cnpj_cpf": "12345678000199",
            "nome": "Finanças Claras LTDA",
            "email": "contato@financasclaras.example",
        },
        "order_bump": "2",
    }


def as_form(payload: dict[str, Any]) -> dict[str, Any]:
    """The postback as Monetizze posts it: bracket keys, plus a JSON copy in `json`."""
    return form_body([*php_form(payload), ("json", json.dumps(payload))])


async def open_monetizze(client: httpx.AsyncClient, db: AsyncEngine, **fields: Any) -> Shop:
    fields.setdefault("secret", CHAVE_UNICA)
    return await open_shop(
        client,
        db,
        preset="monetizze",
        offer_url="https://app.monetizze.com.br/checkout/KPL112233?src={click_id}",
        click_param="src",
        **fields,
    )


async def deliver(client: httpx.AsyncClient, shop: Shop, payload: dict[str, Any]) -> httpx.Response:
    return await client.post(shop.url, params=shop.token, **as_form(payload))


def as_json_body(payload: dict[str, Any]) -> dict[str, Any]:
    """The JSON variant one integration reads: numbers where the form has text."""
    payload["tipoEvento"]["codigo"] = int(payload["tipoEvento"]["codigo"])
    payload["venda"]["valor"] = float(payload["venda"]["valor"])
    return {"json": payload}


@pytest.mark.parametrize(
    "encode",
    [
        lambda payload: form_body(php_form(payload)),
        as_form,
        lambda payload: form_body([("json", json.dumps(payload))]),
        as_json_body,
    ],
    ids=["bracket-keys", "bracket-keys-and-json-copy", "json-field-only", "json-body"],
)
async def test_a_finished_sale_is_created_however_it_is_encoded(
    client: httpx.AsyncClient, db: AsyncEngine, encode: Any
) -> None:
    shop = await open_monetizze(client, db)

    response = await client.post(
        shop.url, params=shop.token, **encode(postback(2, src=shop.click_id))
    )

    assert response.status_code == 200
    assert (response.json()["status"], response.json()["event"]) == ("created", "SALE")
    conversion = await only_conversion(db)
    assert (conversion["click_id"], conversion["merchant_id"]) == (shop.click_id, shop.merchant.id)
    assert (conversion["value_minor"], conversion["currency"]) == (145700, "BRL")
    assert (conversion["txid"], conversion["status"]) == (SALE_CODE, "approved")
    [entry] = await log_entries(db)
    assert entry["details"]["platform_event"] == "2"


async def test_the_older_postback_with_codigo_status_reads_the_same(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db)
    payload = postback(2, src=shop.click_id)
    del payload["tipoEvento"]
    payload["venda"]["codigo_status"] = "2"

    response = await deliver(client, shop, payload)

    assert response.json()["conversion_status"] == "approved"


async def test_a_printed_boleto_is_pending_not_a_sale(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db)

    response = await deliver(client, shop, postback(1, src=shop.click_id, boleto=True))

    assert response.json()["conversion_status"] == "pending"
    assert (await only_conversion(db))["status"] == "pending"


async def test_payment_of_the_boleto_turns_the_pending_sale_approved(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db)

    await deliver(client, shop, postback(1, src=shop.click_id, boleto=True))
    paid = await deliver(client, shop, postback(2, src=shop.click_id, boleto=True))

    assert paid.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert await status_history(db, conversion["id"]) == [
        (None, "pending"),
        ("pending", "approved"),
    ]


async def test_an_unpaid_boleto_is_cancelled(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    shop = await open_monetizze(client, db)

    await deliver(client, shop, postback(1, src=shop.click_id, boleto=True))
    cancelled = await deliver(client, shop, postback(3, src=shop.click_id, boleto=True))

    assert cancelled.json()["status"] == "status_changed"
    assert (await only_conversion(db))["status"] == "declined"


@pytest.mark.parametrize(("code", "final"), [(4, "refunded"), (5, "chargeback")])
async def test_a_refund_or_blocked_sale_after_approval_changes_the_status(
    client: httpx.AsyncClient, db: AsyncEngine, code: int, final: str
) -> None:
    shop = await open_monetizze(client, db)

    await deliver(client, shop, postback(2, src=shop.click_id))
    response = await deliver(client, shop, postback(code, src=shop.click_id))

    assert response.json()["status"] == "status_changed"
    conversion = await only_conversion(db)
    assert (conversion["status"], conversion["value_minor"]) == (final, 145700)
    assert await status_history(db, conversion["id"]) == [(None, "approved"), ("approved", final)]


async def test_a_repeated_sale_and_the_later_completa_count_once(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db)

    outcomes = [
        (await deliver(client, shop, postback(code, src=shop.click_id))).json()["status"]
        for code in (2, 2, 6)
    ]

    assert outcomes == ["created", "duplicate", "duplicate"]
    assert len(await fetch_all(db, conversions)) == 1


async def test_an_abandoned_checkout_is_logged_and_never_counted(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db)
    payload = postback(7, src=shop.click_id, sale_code=None, status="")
    payload["url_recuperacao"] = "https://app.monetizze.com.br/r/KPL112233?rc=a8d7"

    response = await deliver(client, shop, payload)

    assert response.status_code == 200
    assert response.json()["status"] == "ignored"
    assert response.json()["reason"] == "the mapping does not count event '7'"
    assert await fetch_all(db, conversions) == []


@pytest.mark.parametrize(
    ("code", "status", "sale_code"),
    [
        (101, "Finalizada", SALE_CODE),
        (103, "Cancelada", SALE_CODE),
        (104, "Aguardando pagamento", "18299120"),  # the next charge of the subscription
        (99, "Aguardando pagamento", "18299121"),
    ],
)
async def test_subscription_and_payment_method_notices_are_ignored_whatever_status_they_carry(
    client: httpx.AsyncClient, db: AsyncEngine, code: int, status: str, sale_code: str
) -> None:
    shop = await open_monetizze(client, db)
    await deliver(client, shop, postback(2, src=shop.click_id))

    response = await deliver(
        client, shop, postback(code, src=shop.click_id, status=status, sale_code=sale_code)
    )

    assert response.json()["status"] == "ignored"
    reason = f"the mapping does not count event '{code}', status '{status}'"
    assert response.json()["reason"] == reason
    conversion = await only_conversion(db)
    assert (conversion["txid"], conversion["status"]) == (SALE_CODE, "approved")


async def test_a_sale_is_in_reais_even_where_the_workspace_reports_in_dollars(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db, workspace_currency="USD")

    await deliver(client, shop, postback(2, src=shop.click_id))

    conversion = await only_conversion(db)
    assert (conversion["value_minor"], conversion["currency"]) == (145700, "BRL")


async def test_net_value_is_valor_recebido(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    shop = await open_monetizze(client, db, value_choice="net")

    await deliver(client, shop, postback(2, src=shop.click_id))

    assert (await only_conversion(db))["value_minor"] == 126843


async def test_a_sale_without_src_is_invalid_with_the_reason(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db)

    response = await deliver(client, shop, postback(2, src=""))

    assert response.status_code == 400
    assert "venda.src" in response.json()["reason"]


@pytest.mark.parametrize(
    ("chave", "reason"),
    [("0000aaaa1111bbbb2222cccc3333dddd", "does not match"), (None, "missing")],
    ids=["wrong", "missing"],
)
async def test_a_wrong_or_missing_chave_unica_is_refused_and_flagged(
    client: httpx.AsyncClient, db: AsyncEngine, chave: str | None, reason: str
) -> None:
    shop = await open_monetizze(client, db)
    payload = postback(2, src=shop.click_id)
    payload["chave_unica"] = chave

    response = await deliver(client, shop, payload)

    assert response.status_code == 401
    assert response.json()["status"] == "invalid"
    assert reason in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    [entry] = await log_entries(db)
    assert entry["auth_failed"] is True
    secrets = [CHAVE_UNICA, shop.workspace.postback_token, *([chave] if chave else [])]
    await assert_log_keeps_no_secret(db, *secrets)


async def test_chave_unica_and_the_token_never_reach_the_log(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    shop = await open_monetizze(client, db)

    first = await deliver(client, shop, postback(2, src=shop.click_id))
    again = await deliver(client, shop, postback(2, src=shop.click_id))

    assert [first.json()["status"], again.json()["status"]] == ["created", "duplicate"]
    [entry, _] = await log_entries(db)
    assert "chave_unica=" in entry["body"]
    assert "json=" in entry["body"]
    await assert_log_keeps_no_secret(db, CHAVE_UNICA, shop.workspace.postback_token)
