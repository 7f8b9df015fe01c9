"""Forget a buyer, named by e-mail or CPF/CNPJ, everywhere the workspace may hold them, in the
caller's transaction (docs/privacy.md says what each place keeps):

- postback log entries naming the buyer or of their conversions: the request as received is
  emptied; the entry, its outcome and read fields stay;
- those conversions: the e-mail and phone hashes go; the conversions stay;
- delivery attempts of those conversions, or naming the buyer: request and response become
  FORGOTTEN, and so does an error naming them; the attempt and its outcome stay;
- a delivery's last error, a destination's status reason or a notice naming the buyer: FORGOTTEN;
- clicks: a field (sub-ids, UTMs, ad fields), parameter or referrer naming the buyer becomes
  FORGOTTEN, so the click is still counted, and the sub1 rollups count it under FORGOTTEN;
- unmatched samples naming the buyer: deleted.

A text names the buyer when it holds, in any case, their e-mail (as is or URL-encoded), its
SHA-256, the SHA-256 of a phone their conversions kept, or their CPF/CNPJ (digits or
formatted); on their own clicks, also a value that normalises to their e-mail or phone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final
from urllib.parse import quote

from sqlalchemy import (
    Column,
    Connection,
    Table,
    Text,
    case,
    cast,
    delete,
    func,
    or_,
    select,
    update,
)

from trilha.db.schema import (
    campaigns,
    click_view,
    clicks,
    conversions,
    deliveries,
    delivery_attempts,
    destinations,
    notices,
    postback_log,
    unmatched_samples,
)
from trilha.dimensions import DIMENSIONS
from trilha.errors import InvalidInput
from trilha.privacy.buyers import EMPTY_PAYLOAD
from trilha.privacy.hashes import normalise_email, normalise_phone, sha256_hex
from trilha.privacy.masking import is_valid_document
from trilha.reports.rollups import rename_sub1

FORGOTTEN: Final = "[forgotten]"
_CLICK_TEXTS: Final = (*DIMENSIONS, "referrer")


@dataclass(frozen=True, slots=True)
class Forgotten:
    """How many rows "forget this buyer" touched, per kind."""

    log_entries: int
    conversions: int
    delivery_attempts: int
    clicks: int
    unmatched_samples: int


@dataclass(frozen=True, slots=True)
class Buyer:
    """What names a buyer in stored text (lower case), and the hashes trilha keeps of them."""

    spellings: tuple[str, ...]
    hashes: frozenset[str] = frozenset()

    def is_named_in(self, text: str) -> bool:
        lowered = text.lower()
        return any(spelling in lowered for spelling in self.spellings)

    def is_value(self, text: str) -> bool:
        """Whether ``text``, normalised as conversion APIs take it, is their e-mail or phone."""
        return any(
            value is not None and sha256_hex(value) in self.hashes
            for value in (normalise_email(text), normalise_phone(text))
        )

    def with_spellings(self, more: Iterable[str]) -> Buyer:
        return replace(self, spellings=tuple(sorted({*self.spellings, *more})))


def forget_buyer(
    conn: Connection,
    workspace_id: str,
    *,
    email: str | None = None,
    cpf: str | None = None,
    now: datetime,
) -> Forgotten:
    buyer = named_buyer(email, cpf)
    log_ids, conversion_ids = _log_entries_naming(conn, workspace_id, buyer)
    if buyer.hashes:
        conversion_ids |= _conversions_hashed(conn, workspace_id, buyer.hashes)
    buyer = _with_what_conversions_kept(conn, workspace_id, buyer, conversion_ids)
    log = postback_log.c
    purged = conn.execute(
        update(postback_log)
        .where(
            log.workspace_id == workspace_id,
            or_(log.id.in_(log_ids), log.conversion_id.in_(conversion_ids), _names(log, buyer)),
        )
        .values(**EMPTY_PAYLOAD, payload_purged_at=now)
    ).rowcount
    c = conversions.c
    unhashed = conn.execute(
        update(conversions)
        .where(
            c.workspace_id == workspace_id,
            c.id.in_(conversion_ids),
            or_(c.buyer_email_sha256.is_not(None), c.buyer_phone_sha256.is_not(None)),
        )
        .values(buyer_email_sha256=None, buyer_phone_sha256=None)
    ).rowcount
    attempts = _forget_in_deliveries(conn, workspace_id, buyer, conversion_ids)
    clicks_changed = _forget_in_clicks(conn, workspace_id, buyer)
    s = unmatched_samples.c
    samples = conn.execute(
        delete(unmatched_samples).where(_names_any((s.query, s.body, s.headers), buyer))
    ).rowcount
    return Forgotten(
        log_entries=purged,
        conversions=unhashed,
        delivery_attempts=attempts,
        clicks=clicks_changed,
        unmatched_samples=samples,
    )


def named_buyer(email: str | None, cpf: str | None) -> Buyer:
    """The buyer an e-mail or a CPF/CNPJ names."""
    if (email is None) == (cpf is None):
        raise InvalidInput({"email": "give the buyer's e-mail or CPF/CNPJ, one of them"})
    if email is not None:
        normalised = normalise_email(email[:320])
        if normalised is None:
            raise InvalidInput({"email": "not an e-mail address"})
        hashed = sha256_hex(normalised)
        spellings = (normalised, quote(normalised, safe="").lower(), hashed)
        return Buyer(tuple(sorted(set(spellings))), frozenset({hashed}))
    digits = "".join(ch for ch in str(cpf)[:40] if ch.isascii() and ch.isdigit())
    if not is_valid_document(digits):
        raise InvalidInput({"cpf": "not a valid CPF or CNPJ"})
    if len(digits) == 11:
        formatted = [f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"]
    else:
        head = f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}"
        tail = f"{digits[8:12]}-{digits[12:]}"
        formatted = [f"{head}{slash}{tail}" for slash in ("/", "%2f", "\\/")]
    return Buyer((digits, *formatted))


def _log_entries_naming(
    conn: Connection, workspace_id: str, buyer: Buyer
) -> tuple[set[str], set[str]]:
    """Ids of the workspace's log entries whose payload names the buyer, and their conversions."""
    log = postback_log.c
    rows = conn.execute(
        select(log.id, log.conversion_id).where(
            log.workspace_id == workspace_id,
            log.payload_purged_at.is_(None),
            _names(log, buyer),
        )
    ).all()
    return {row.id for row in rows}, {row.conversion_id for row in rows if row.conversion_id}


def _conversions_hashed(conn: Connection, workspace_id: str, hashes: Iterable[str]) -> set[str]:
    c = conversions.c
    return set(
        conn.execute(
            select(c.id).where(c.workspace_id == workspace_id, c.buyer_email_sha256.in_(hashes))
        ).scalars()
    )


def _with_what_conversions_kept(
    conn: Connection, workspace_id: str, buyer: Buyer, conversion_ids: set[str]
) -> Buyer:
    """The buyer, also named by the hashes their conversions keep, and by the values of their
    clicks that are their e-mail or phone however written ("(11) 98765-4321")."""
    c = conversions.c
    rows = conn.execute(
        select(c.click_id, c.buyer_email_sha256, c.buyer_phone_sha256).where(
            c.workspace_id == workspace_id, c.id.in_(conversion_ids)
        )
    ).all()
    hashes = {h for row in rows for h in (row[1], row[2]) if h} | buyer.hashes
    buyer = replace(buyer.with_spellings(hashes), hashes=frozenset(hashes))
    click_ids = {row.click_id for row in rows if row.click_id}
    values = {
        value.lower()
        for row in conn.execute(
            click_view.where(campaigns.c.workspace_id == workspace_id, clicks.c.id.in_(click_ids))
        ).mappings()
        for value in _click_values(row)
        if buyer.is_value(value)
    }
    return buyer.with_spellings(values)


def _click_values(click: Any) -> list[str]:
    params = click["params"] or {}
    texts = [click[name] for name in _CLICK_TEXTS] + [*params.keys(), *params.values()]
    return [text for text in texts if isinstance(text, str) and text]


def _forget_in_deliveries(
    conn: Connection, workspace_id: str, buyer: Buyer, conversion_ids: set[str]
) -> int:
    """Empty the attempts that told of the buyer; the errors naming them elsewhere."""
    a, d = delivery_attempts.c, deliveries.c
    workspace_deliveries = select(d.id).where(d.workspace_id == workspace_id)
    theirs = workspace_deliveries.where(d.conversion_id.in_(conversion_ids))
    attempts = conn.execute(
        update(delivery_attempts)
        .where(
            a.delivery_id.in_(workspace_deliveries),
            or_(a.delivery_id.in_(theirs), _names_any((a.request, a.response, a.error), buyer)),
        )
        .values(
            request=FORGOTTEN,
            response=FORGOTTEN,
            error=case((_names_any((a.error,), buyer), FORGOTTEN), else_=a.error),
        )
    ).rowcount
    for table, column in (
        (deliveries, "last_error"),
        (destinations, "status_reason"),
        (notices, "message"),
    ):
        _replace_where_named(conn, table, table.c[column], workspace_id, buyer)
    return attempts


def _replace_where_named(
    conn: Connection, table: Table, column: Column[Any], workspace_id: str, buyer: Buyer
) -> None:
    conn.execute(
        update(table)
        .where(table.c.workspace_id == workspace_id, _names_any((column,), buyer))
        .values({column.name: FORGOTTEN})
    )


def _forget_in_clicks(conn: Connection, workspace_id: str, buyer: Buyer) -> int:
    """Replace what names the buyer in the workspace's clicks; the count of clicks changed."""
    c = clicks.c
    texts = (*(c[name] for name in _CLICK_TEXTS), c.params)
    rows = conn.execute(
        select(c.id, *texts).where(
            c.campaign_id.in_(
                select(campaigns.c.id).where(campaigns.c.workspace_id == workspace_id)
            ),
            _names_any(texts, buyer),
        )
    ).mappings()
    sub1_values: set[str] = set()
    changed = 0
    for row in rows.all():
        values: dict[str, Any] = {
            name: FORGOTTEN for name in _CLICK_TEXTS if buyer.is_named_in(row[name] or "")
        }
        params = {
            _forgotten_if_named(name, buyer): _forgotten_if_named(value, buyer)
            for name, value in (row["params"] or {}).items()
        }
        if params != row["params"]:
            values["params"] = params
        if "sub1" in values:
            sub1_values.add(row["sub1"])
        if values:
            conn.execute(update(clicks).where(c.id == row["id"]).values(**values))
            changed += 1
    rename_sub1(conn, workspace_id, sub1_values, FORGOTTEN)
    return changed


def _forgotten_if_named(value: Any, buyer: Buyer) -> Any:
    """FORGOTTEN for a text naming the buyer; a list's texts one by one (the cut names)."""
    if isinstance(value, list):
        return [_forgotten_if_named(item, buyer) for item in value]
    if isinstance(value, str) and buyer.is_named_in(value):
        return FORGOTTEN
    return value


def _names(log: Any, buyer: Buyer) -> Any:
    return _names_any((log.query, log.body, log.headers), buyer)


def _names_any(columns: Iterable[Any], buyer: Buyer) -> Any:
    return or_(
        *(
            func.lower(cast(column, Text)).contains(spelling, autoescape=True)
            for column in columns
            for spelling in buyer.spellings
        )
    )
