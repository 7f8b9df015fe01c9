"""Generic: any platform or tracker that calls a URL with parameters or posts a form or JSON."""

from __future__ import annotations

from trilha.postbacks.preset import AuthKind, Preset

PRESET = Preset(
    name="generic",
    label="Generic (any webhook)",
    paths={
        "click_id": (
            "click_id",
            "clickid",
            "cid",
            "subid",
            "sub_id",
            "sck",
            "src",
            "s1",
            "aff_sub",
            "visitor_id",
        ),
        "event": ("tipo", "event", "type", "et"),
        "status": ("status",),
        "value": ("payout", "valor", "value", "amount", "revenue", "sum"),
        "net_value": ("net", "commission", "comissao"),
        "currency": ("moeda", "currency"),
        "txid": ("txid", "transaction_id", "transaction", "tid", "order_id", "orderid"),
        "secret": ("secret",),
    },
    rules=(),
    auth=AuthKind.FIELD,
    setup="?token=WORKSPACE_TOKEN&click_id={click id}&tipo=venda&payout={value}&txid={order id}"
    "&status={status}",
)
