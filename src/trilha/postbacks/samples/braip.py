"""Braip: a form of trans_* fields (unverified, like the preset: compare with a real delivery)."""

from __future__ import annotations

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
)

# type and trans_status: Braip names every change STATUS_ALTERADO and tells it by the status text.
WORDS = {
    Status.APPROVED: ("STATUS_ALTERADO", "Pagamento Aprovado"),
    Status.PENDING: ("STATUS_ALTERADO", "Aguardando Pagamento"),
    Status.DECLINED: ("STATUS_ALTERADO", "Cancelada"),
    Status.REFUNDED: ("STATUS_ALTERADO", "Devolvida"),
    Status.CHARGEBACK: ("STATUS_ALTERADO", "Chargeback"),
}


def build(sale: Sale) -> SampleRequest:
    return form_request(
        {
            "basic_authentication": sale.secret,
            "type": sale.event,
            "trans_key": sale.txid,
            "trans_status": sale.status,
            "trans_value": f"{sale.value:.2f}",
            "trans_createdate": local_time(sale.sent_at),
            "prod_name": PRODUCT,
            "cli_name": BUYER["name"],
            "cli_email": BUYER["email"],
            "src": sale.click_id,
        }
    )


SAMPLE = Sample(by_status(WORDS), build)
