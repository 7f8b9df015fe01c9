"""Test postbacks: a sample sale, shaped like the merchant's platform sends it, through the real
pipeline.

Not a dry run: the request is logged and its conversion stored like any other, which is what
shows that the merchant's mapping works end to end.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from urllib.parse import urlencode

from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.status import Status
from trilha.errors import InvalidInput, NotFound
from trilha.ids import new_id
from trilha.merchants import Merchant, load_merchant
from trilha.money import AmountError, check_currency
from trilha.postbacks.log import get_log_entry
from trilha.postbacks.mapping import MappingError, classify
from trilha.postbacks.payload import parse_request
from trilha.postbacks.platforms import SAMPLES
from trilha.postbacks.raw import RawPostback
from trilha.postbacks.receive import receive_postback
from trilha.postbacks.result import Result
from trilha.postbacks.sample import Sale, Sample, Words
from trilha.workspaces import Workspace


@dataclass(frozen=True, slots=True)
class TrialSale:
    """What to report, in trilha's words; a missing click id or txid is made up."""

    event_type: str
    status: Status
    value: Decimal
    currency: str | None = None
    click_id: str | None = None  # None: a made-up one, so the conversion is an orphan
    txid: str | None = None


@dataclass(frozen=True, slots=True)
class SentRequest:
    """The request as the postback log keeps it: secrets masked."""

    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: str


@dataclass(frozen=True, slots=True)
class Trial:
    result: Result
    sent: SentRequest


async def send_test_postback(
    conn: AsyncConnection,
    workspace: Workspace,
    merchant_id: str,
    sale: TrialSale,
    *,
    source_ip: str,
    now: datetime,
) -> Trial:
    merchant = await conn.run_sync(load_merchant, workspace.id, merchant_id=merchant_id)
    if merchant is None:
        raise NotFound("merchant not found")
    sample = SAMPLES[merchant.preset.name]
    event_type = sale.event_type.strip().upper()
    try:
        event, status = choose_words(merchant, sample, event_type, sale.status)
        currency = check_currency(sale.currency or workspace.currency)
    except MappingError as exc:
        raise InvalidInput({"status": f"{exc}; add one to the merchant"}) from None
    except AmountError as exc:
        raise InvalidInput({"currency": str(exc)}) from None
    request = sample.build(
        Sale(
            click_id=sale.click_id or f"test-{new_id()}",
            event=event,
            status=status,
            value=sale.value,
            currency=currency,
            txid=sale.txid or f"TEST-{new_id()[:12]}",
            secret=merchant.secret,
            sent_at=now,
        )
    )
    token = urlencode({"token": workspace.postback_token})
    raw = RawPostback(
        method=request.method,
        path=f"/pb/{merchant.key}",
        query=f"{token}&{request.query}" if request.query else token,
        headers=request.headers,
        body=request.body,
        source_ip=source_ip,
        host="",
        received_at=now,
        merchant_key=merchant.key,
    )
    received = await parse_request(raw)
    result = await conn.run_sync(receive_postback, received, is_test=True)
    entry = await get_log_entry(conn, workspace.id, str(result.postback_id))
    if entry is None:  # receive_postback logs every request, in this very transaction
        raise RuntimeError("the test postback was not logged")
    headers = [(name, value) for name, value in entry["headers"]]
    sent = SentRequest(entry["method"], entry["path"], entry["query"], headers, entry["body"])
    return Trial(result, sent)


def choose_words(merchant: Merchant, sample: Sample, event_type: str, status: Status) -> Words:
    """Words the merchant's mapping turns into (event_type, status): the platform's usual ones
    first, then those of each matching rule, the merchant's own rules before the preset's.

    Raises MappingError when no words give them.
    """
    usual_event, usual_status = sample.words(event_type, status) or (None, None)
    candidates = [(usual_event, usual_status)] + [
        (rule.when_event or usual_event, rule.when_status or usual_status)
        for rule in (*merchant.rules, *merchant.preset.rules)
        if (rule.event_type, rule.status) == (event_type, status)
    ]
    for event, word in candidates:
        if (event or word) and _gives(merchant, event, word) == (event_type, status):
            return event, word
    raise MappingError(f"no rule of the merchant's mapping gives {event_type} {status}")


def _gives(merchant: Merchant, event: str | None, status: str | None) -> tuple[str, str] | None:
    try:
        return classify(merchant, event, status)
    except MappingError:
        return None
