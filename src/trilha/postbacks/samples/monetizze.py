"""Monetizze: a form with bracket keys, and the same postback as JSON in the `json` field."""

from __future__ import annotations

import json
from typing import Any

from trilha.postbacks.preset import Status
from trilha.postbacks.sample import (
    BUYER,
    PRODUCT,
    Sale,
    Sample,
    SampleRequest,
    by_status,
    form_request,
    local_time,
    net,
)

# tipoEvento[codigo] and venda[status]
WORDS = {
    Status.APPROVED: ("2", "Finalizada"),
    Status.PENDING: ("1", "Aguardando pagamento"),
    Status.DECLINED: ("3", "Cancelada"),
    Status.REFUNDED: ("4", "Devolvida"),
    Status.CHARGEBACK: ("5", "Bloqueada"),
}


def build(sale: Sale) -> SampleRequest:
    postback: dict[str, Any] = {
        "chave_unica": sale.secret,
        "tipoPostback": {"codigo": "2", "descricao": "Produtor"},
        "tipoEvento": {"codigo": sale.event, "descricao": sale.status},
        "produto": {"codigo": "0", "nome": PRODUCT},
        "venda": {
            "codigo": sale.txid,
            "dataInicio": local_time(sale.sent_at),
            "status": sale.status,
            "valor": f"{sale.value:.2f}",
            "valorRecebido": f"{net(sale.value):.2f}",
            "formaPagamento": "Cartão de crédito",
            "src": sale.click_id,
        },
        "comprador": {"nome": BUYER["name"], "email": BUYER["email"]},
    }
    fields: dict[str, str | None] = {}
    for group, value in postback.items():
        if isinstance(value, dict):
            fields.update({f"{group}[{key}]": item for key, item in value.items()})
        else:
            fields[group] = value
    fields["json"] = json.dumps(postback, ensure_ascii=False)
    return form_request(fields)


SAMPLE = Sample(by_status(WORDS), build)
