"""Braip postback (field names unverified: check one real delivery and adjust the paths)."""

from __future__ import annotations

from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule, Status

STATUS_TEXTS = {
    "Pagamento Aprovado": Status.APPROVED,
    "Aguardando Pagamento": Status.PENDING,
    "Em Análise": Status.PENDING,
    "Em Processamento": Status.PENDING,
    "Pagamento Atrasado": Status.PENDING,
    "Parcialmente Pago": Status.PENDING,
    "Cancelada": Status.DECLINED,
    "Devolvida": Status.REFUNDED,
    "Estorno Pendente": Status.APPROVED,
    "Chargeback": Status.CHARGEBACK,
}

PRESET = Preset(
    name="braip",
    label="Braip",
    paths={
        "click_id": ("src", "trans_src", "utm_content", "sck"),
        "event": ("type",),
        "status": ("trans_status",),
        "value": ("trans_value", "trans_total_value"),
        "net_value": ("commissions.value",),
        "currency": (),
        "txid": ("trans_key",),
        "secret": ("basic_authentication",),
    },
    rules=(
        *(Rule("SALE", status, when_status=text) for text, status in STATUS_TEXTS.items()),
        Rule("SALE", IGNORE),
    ),
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    setup="Braip → Ferramentas → Postback: URL …/pb/braip?token=WORKSPACE_TOKEN. Copy the "
    "'basic_authentication' key into the merchant's secret.",
    secret_names=("basic_authentication",),
)
