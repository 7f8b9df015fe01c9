"""Where each platform puts the buyer: the fields the log masks, and where the e-mail and phone
that conversions keep hashed are read.

A path names a field or a whole object (every value under it is the buyer's); a last segment
ending in ``*`` names every field starting so (Braip's ``client_*``). Paths of platforms not
listed here, and fields outside these paths, are still masked by pattern (trilha.privacy.masking).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class BuyerFields:
    masked: tuple[str, ...]
    email: tuple[str, ...] = ()
    phone: tuple[str, ...] = ()


# Names any sender may use, whatever its preset (the generic webhook, a platform not listed).
COMMON: Final = BuyerFields(
    masked=(
        "buyer",
        "customer",
        "Customer",
        "client",
        "comprador",
        "cliente",
        "student",
        "email",
        "e-mail",
        "buyer_email",
        "customer_email",
        "name",
        "buyer_name",
        "customer_name",
        "nome",
        "phone",
        "telefone",
        "celular",
        "mobile",
        "cpf",
        "cnpj",
        "cpf_cnpj",
        "cnpj_cpf",
        "document",
        "documento",
        "address",
        "endereco",
        "zip_code",
        "zipcode",
        "cep",
    ),
    email=("email", "buyer_email", "customer_email", "buyer.email", "customer.email"),
    phone=("phone", "telefone", "celular", "mobile", "buyer.phone", "customer.phone"),
)

PLATFORM_FIELDS: Final[Mapping[str, BuyerFields]] = {
    "hotmart": BuyerFields(
        masked=("data.buyer",),
        email=("data.buyer.email",),
        phone=("data.buyer.checkout_phone", "data.buyer.phone"),
    ),
    "kiwify": BuyerFields(
        masked=("Customer", "order.Customer"),
        email=("Customer.email", "order.Customer.email"),
        phone=("Customer.mobile", "order.Customer.mobile"),
    ),
    "monetizze": BuyerFields(
        masked=("comprador",),
        email=("comprador.email",),
        phone=("comprador.telefone", "comprador.celular"),
    ),
    "braip": BuyerFields(
        masked=("client_*",), email=("client_email",), phone=("client_cel", "client_phone")
    ),
    "eduzz": BuyerFields(
        masked=("cus_*", "customer", "data.buyer", "data.student"),
        email=("cus_email", "customer.email", "data.buyer.email"),
        phone=("cus_cel", "cus_tel", "customer.cellphone", "data.buyer.cellphone"),
    ),
    "eduzz_v3": BuyerFields(
        masked=("data.buyer", "data.student"),
        email=("data.buyer.email",),
        phone=("data.buyer.cellphone", "data.buyer.phone"),
    ),
    "perfectpay": BuyerFields(
        masked=("customer",),
        email=("customer.email",),
        phone=("customer.phone_formated_ddi", "customer.phone_number"),
    ),
    "ticto": BuyerFields(
        masked=("customer",), email=("customer.email",), phone=("customer.phone",)
    ),
    "cakto": BuyerFields(
        masked=("data.customer", "data.subscription.customer", "data.card"),
        email=("data.customer.email",),
        phone=("data.customer.phone",),
    ),
    "greenn": BuyerFields(
        masked=("client",), email=("client.email",), phone=("client.cellphone", "client.phone")
    ),
    "hubla": BuyerFields(
        masked=("event.invoice.payer", "event.invoice.billingAddress", "event.user"),
        email=("event.invoice.payer.email", "event.user.email"),
        phone=("event.invoice.payer.phone", "event.user.phone"),
    ),
    "lastlink": BuyerFields(
        masked=("Data.Buyer",), email=("Data.Buyer.Email",), phone=("Data.Buyer.PhoneNumber",)
    ),
    "payt": BuyerFields(
        masked=("customer", "shipping.address"),
        email=("customer.email",),
        phone=("customer.phone",),
    ),
    "kirvano": BuyerFields(
        masked=("customer",), email=("customer.email",), phone=("customer.phone_number",)
    ),
    "doppus": BuyerFields(
        masked=("customer", "address", "data.customer", "data.address"),
        email=("customer.email", "data.customer.email"),
        phone=("customer.phone", "data.customer.phone"),
    ),
}


def buyer_fields(platform: str | None) -> BuyerFields:
    """The platform's buyer fields, then the common names."""
    own = PLATFORM_FIELDS.get(platform or "")
    if own is None:
        return COMMON
    return BuyerFields(
        masked=(*own.masked, *COMMON.masked),
        email=(*own.email, *COMMON.email),
        phone=(*own.phone, *COMMON.phone),
    )


# What the log masks whatever the merchant: a postback may come from any platform (a webhook
# sent to the wrong merchant, or to no merchant at all), and masking more costs nothing.
ALL_FIELDS: Final = BuyerFields(
    masked=tuple(
        dict.fromkeys(
            path for fields in (*PLATFORM_FIELDS.values(), COMMON) for path in fields.masked
        )
    )
)
