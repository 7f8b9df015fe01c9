"""Where each platform's sales export puts what reconciliation needs, and what its statuses
mean. The presets name the columns of the platforms' own exports (each has had a few spellings
over the years, so several are tried); a merchant's stored choice, when there is one, wins."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Final

from trilha.conversions.status import Status


class Layout(StrEnum):
    HOTMART = "hotmart"
    KIWIFY = "kiwify"
    MONETIZZE = "monetizze"
    EDUZZ = "eduzz"
    CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class Columns:
    """The header of each column to read; currency may be absent (the workspace's is used)."""

    txid: str
    status: str
    value: str
    sold_at: str
    currency: str = ""

    @classmethod
    def of(cls, values: Mapping[str, str]) -> Columns:
        return cls(**{f.name: values.get(f.name, "").strip() for f in fields(cls)})

    def as_dict(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


REQUIRED: Final = ("txid", "status", "value", "sold_at")

# Per layout and column, the headers its export has used, most recent first.
PRESETS: Final[dict[Layout, dict[str, tuple[str, ...]]]] = {
    Layout.HOTMART: {
        "txid": ("Transação", "Código da transação", "Transaction"),
        "status": ("Status", "Status da transação", "Transaction status"),
        "value": (
            "Valor de compra com impostos",
            "Preço Total",
            "Valor da compra",
            "Faturamento líquido",
            "Purchase value",
        ),
        "sold_at": ("Data da transação", "Data de Venda", "Data do pedido", "Transaction date"),
        "currency": ("Moeda", "Moeda de compra", "Currency"),
    },
    Layout.KIWIFY: {
        "txid": ("ID da venda", "ID do pedido", "Pedido", "Order ID"),
        "status": ("Status", "Status do pedido"),
        "value": ("Valor líquido", "Valor total", "Preço base do produto", "Valor"),
        "sold_at": ("Data de criação", "Data", "Data da venda", "Created at"),
        "currency": ("Moeda", "Currency"),
    },
    Layout.MONETIZZE: {
        "txid": ("Código Venda", "Código da venda", "Transação", "Venda"),
        "status": ("Status", "Status da venda"),
        "value": ("Valor", "Valor da venda", "Valor Total", "Comissão"),
        "sold_at": ("Data Pedido", "Data da venda", "Data", "Data Cadastro"),
        "currency": ("Moeda",),
    },
    Layout.EDUZZ: {
        "txid": ("Fatura", "Código da fatura", "Nº Fatura", "Invoice"),
        "status": ("Status", "Situação", "Status da fatura"),
        "value": ("Valor", "Valor Pago", "Valor da fatura", "Valor líquido"),
        "sold_at": ("Data de Criação", "Data da Fatura", "Data de Pagamento", "Data"),
        "currency": ("Moeda",),
    },
    Layout.CUSTOM: {
        "txid": ("txid", "transaction", "transaction_id", "id"),
        "status": ("status",),
        "value": ("value", "valor", "amount"),
        "sold_at": ("date", "data", "created_at"),
        "currency": ("currency", "moeda"),
    },
}


def fold(text: str) -> str:
    """A header or status as compared: no accents, no case, single spaces.

    >>> fold("  Código   da Transação ")
    'codigo da transacao'
    """
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(plain.lower().split())


def guess_columns(header: Sequence[str], layout: Layout) -> dict[str, str]:
    """For each column the layout names, the header of the file that matches one of its
    spellings (accents and case aside); a column nothing matches is left out."""
    present = {fold(name): name for name in header}
    found: dict[str, str] = {}
    for column, spellings in PRESETS[layout].items():
        for spelling in spellings:
            if fold(spelling) in present:
                found[column] = present[fold(spelling)]
                break
    return found


def layout_for(preset: str) -> Layout:
    """The export layout of a merchant's postback preset (custom for the others)."""
    try:
        return Layout(preset)
    except ValueError:
        return Layout.CUSTOM


# Words of the platforms' status texts (pt-BR and en, as they export them), folded; the first
# that a status contains decides. Refunds before approvals: "aprovado, reembolsado" is a refund.
_STATUS_WORDS: Final = (
    ("chargeback", Status.CHARGEBACK),
    ("chargedback", Status.CHARGEBACK),
    ("contestad", Status.CHARGEBACK),
    ("disputa", Status.CHARGEBACK),
    ("reembols", Status.REFUNDED),
    ("refund", Status.REFUNDED),
    ("estorn", Status.REFUNDED),
    ("devolvid", Status.REFUNDED),
    ("cancelad", Status.DECLINED),
    ("canceled", Status.DECLINED),
    ("cancelled", Status.DECLINED),
    ("recusad", Status.DECLINED),
    ("refused", Status.DECLINED),
    ("expirad", Status.DECLINED),
    ("expired", Status.DECLINED),
    ("bloquead", Status.DECLINED),
    ("aguardando", Status.PENDING),
    ("pendente", Status.PENDING),
    ("pending", Status.PENDING),
    ("waiting", Status.PENDING),
    ("processando", Status.PENDING),
    ("processing", Status.PENDING),
    ("em analise", Status.PENDING),
    ("impresso", Status.PENDING),
    ("printed", Status.PENDING),
    ("gerado", Status.PENDING),
    ("atrasad", Status.PENDING),
    ("aprovad", Status.APPROVED),
    ("approved", Status.APPROVED),
    ("completo", Status.APPROVED),
    ("complete", Status.APPROVED),
    ("finalizad", Status.APPROVED),
    ("paga", Status.APPROVED),
    ("pago", Status.APPROVED),
    ("paid", Status.APPROVED),
    ("autorizad", Status.APPROVED),
    ("authorized", Status.APPROVED),
)


def read_status(text: str) -> Status | None:
    """The status a platform's export means, or None when it is no known word.

    >>> read_status("Aprovado"), read_status("REEMBOLSADO"), read_status("Boleto impresso")
    (<Status.APPROVED: 'approved'>, <Status.REFUNDED: 'refunded'>, <Status.PENDING: 'pending'>)
    """
    folded = fold(text)
    for word, status in _STATUS_WORDS:
        if word in folded:
            return status
    return None
