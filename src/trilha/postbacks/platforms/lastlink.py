"""Lastlink webhook: JSON POST `{Id, IsTest, Event, CreatedAt, Data}`, the event naming what
happened (`Purchase_Order_Confirmed`, `Recurrent_Payment`, `Payment_Refund`, ...), the payment in
`Data.Purchase` (`PaymentId`, `Price.Value` in reais), the checkout's tracking in `Data.Utm`
(`Src`, `Sck`, `Utm*`). Lastlink's documentation lists the events and fields (confidence medium:
no header name for its token, so the check applies only when the merchant has a secret).

The sample delivery is that JSON, the click id in `Data.Utm.Src`.
"""

from __future__ import annotations

from typing import Any

from trilha.conversions.status import Status
from trilha.postbacks.preset import IGNORE, AuthKind, Preset, Rule
from trilha.postbacks.sample import (
    BUYER,
    PRODUCT,
    Sale,
    Sample,
    SampleRequest,
    by_status,
    json_request,
)

EVENTS = {
    "Purchase_Order_Confirmed": ("SALE", Status.APPROVED),
    "Purchase_Request_Confirmed": ("SALE", Status.PENDING),  # the PIX or boleto was issued
    "Purchase_Request_Canceled": ("SALE", Status.DECLINED),
    "Purchase_Request_Expired": ("SALE", Status.PENDING),  # may still be paid: then it counts
    "Payment_Refund": ("SALE", Status.REFUNDED),
    "Payment_Chargeback": ("SALE", Status.CHARGEBACK),
    "Recurrent_Payment": ("REBILL", Status.APPROVED),
    # An overdue renewal: pending until it is paid (Recurrent_Payment) — never a decline.
    "Subscription_Renewal_Pending": ("REBILL", Status.PENDING),
    # Ending a subscription refunds nothing: the sales already made stay counted.
    "Subscription_Canceled": ("SALE", IGNORE),
    "Subscription_Expired": ("SALE", IGNORE),
    "Abandoned_Cart": ("LEAD", IGNORE),
}

PRESET = Preset(
    name="lastlink",
    label="Lastlink",
    paths={
        "click_id": ("Data.Utm.Src", "Data.Utm.Sck"),
        "event": ("Event",),
        "status": (),
        "value": ("Data.Purchase.Price.Value", "Data.Purchase.OriginalPrice.Value"),
        "net_value": (),
        "currency": (),
        "txid": ("Data.Purchase.PaymentId",),
        "secret": ("x-lastlink-token", "x-webhook-token"),
    },
    rules=(
        *(Rule(kind, status, when_event=event) for event, (kind, status) in EVENTS.items()),
        # Refund period over, refund requests, access and member notices: logged only.
        Rule("SALE", IGNORE),
    ),
    auth=AuthKind.FIELD,
    currency="BRL",  # no currency field: BRL only
    setup="Lastlink → Produtos → (the product) → Integrações → Lastlink - Webhook → Novo webhook: "
    "URL …/pb/lastlink?token=WORKSPACE_TOKEN, the purchase, payment and subscription events. "
    "Send the click id as ?src= on the checkout.",
    secret_names=("x-lastlink-token", "x-webhook-token"),
)


WORDS = {
    Status.APPROVED: ("Purchase_Order_Confirmed", None),
    Status.PENDING: ("Purchase_Request_Confirmed", None),
    Status.DECLINED: ("Purchase_Request_Canceled", None),
    Status.REFUNDED: ("Payment_Refund", None),
    Status.CHARGEBACK: ("Payment_Chargeback", None),
}


def build(sale: Sale) -> SampleRequest:
    price = {"Value": float(sale.value)}
    data: dict[str, Any] = {
        "Products": [{"Id": "test", "Name": PRODUCT}],
        "Buyer": {"Name": BUYER["name"], "Email": BUYER["email"]},
        "Purchase": {
            "PaymentId": sale.txid,
            "PaymentDate": sale.sent_at.isoformat(),
            "OriginalPrice": price,
            "Price": price,
            "Payment": {"NumberOfInstallments": 1, "PaymentMethod": "CreditCard"},
        },
        "Utm": {"Src": sale.click_id, "Sck": None, "UtmSource": None},
    }
    body = {
        "Id": f"evt-{sale.txid}",
        "IsTest": False,
        "Event": sale.event,
        "CreatedAt": sale.sent_at.isoformat(),
        "Data": data,
    }
    headers = (("x-lastlink-token", sale.secret),) if sale.secret else ()
    return json_request(body, headers)


SAMPLE = Sample(by_status(WORDS), build)
