"""receive_postback(): a pipeline of small steps that ends in exactly one Outcome, logged.

identify the workspace → read the payload → choose the merchant → check IP and secret → map the
fields → find the click → record (dedupe, status change) → log, all in the caller's transaction.
A request that matches no workspace is only counted (see trilha.postbacks.unmatched).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar, cast
from urllib.parse import parse_qsl

from sqlalchemy import Connection, Row, bindparam, literal_column, select

from trilha.conversions.attribution import Attribution, find_click, find_click_and_merchant
from trilha.conversions.outcome import Outcome
from trilha.conversions.record import Dedupe, Reported, record_conversion
from trilha.conversions.status import Status
from trilha.db.schema import domains, workspaces
from trilha.event_types import event_type_names
from trilha.ids import new_id
from trilha.merchants import GENERIC, Merchant, load_merchant
from trilha.money import AmountError
from trilha.postbacks.auth import check_secret
from trilha.postbacks.log import write_log
from trilha.postbacks.mapping import Fields, MappingError, map_fields, misfit_reason, read_field
from trilha.postbacks.payload import (
    PayloadError,
    Received,
    Tree,
    merge_query,
    pairs_to_tree,
    parse_form,
)
from trilha.postbacks.preset import IGNORE, AuthKind
from trilha.postbacks.raw import RawPostback
from trilha.postbacks.result import Rejected, Result
from trilha.postbacks.secret_fields import KNOWN_SECRET_FIELDS, KNOWN_SECRET_HEADERS, values_at
from trilha.postbacks.trace import Trace
from trilha.postbacks.unmatched import record_unmatched
from trilha.privacy.buyer_fields import ALL_FIELDS, buyer_fields
from trilha.privacy.hashes import read_buyer_hashes
from trilha.privacy.masking import buyer_values
from trilha.validation import is_text

T = TypeVar("T")

# Built once: SQLAlchemy then compiles each only once, and the hot path skips building them.
_WORKSPACE = select(
    workspaces.c.id,
    workspaces.c.currency,
    workspaces.c.postback_token,
    workspaces.c.keeps_buyer_data,
)
_WORKSPACE_BY_ID = _WORKSPACE.where(workspaces.c.id == bindparam("id"))
_WORKSPACE_BY_TOKEN = _WORKSPACE.where(workspaces.c.postback_token == bindparam("token"))
# Only verified domains name a workspace; the literal status lets the partial index serve it.
_WORKSPACE_BY_HOST = _WORKSPACE.join(domains, domains.c.workspace_id == workspaces.c.id).where(
    domains.c.host == bindparam("host"), domains.c.status == literal_column("'verified'")
)


class SetupReads:
    """The workspace's set-up (its token, event types, merchants) as one transaction read it.

    The postbacks of a batch share one transaction and never write their workspace's set-up, so
    reading it again for each postback would only return the same rows: they are read once per
    batch. A postback outside a batch gets reads of its own.
    """

    def __init__(self) -> None:
        self._memo: dict[tuple[str, ...], Any] = {}

    def get(self, key: tuple[str, ...], load: Callable[[], T]) -> T:
        if key not in self._memo:
            self._memo[key] = load()
        return cast(T, self._memo[key])


@dataclass(frozen=True, slots=True)
class Replay:
    """A stored request processed again: its workspace is known, its secrets are masked."""

    workspace_id: str
    log_id: str


def receive_postback(
    conn: Connection,
    received: Received,
    *,
    replay: Replay | None = None,
    reads: SetupReads | None = None,
    is_test: bool = False,
) -> Result:
    """``is_test``: a "send test postback" (trilha.postbacks.trial), its conversion marked so."""
    started = time.perf_counter()
    raw = received.raw
    trace = Trace(postback_id=new_id())
    try:
        result = _process(conn, received, trace, replay, reads or SetupReads(), is_test)
    except Rejected as exc:
        result = Result(Outcome.INVALID, exc.reason, exc.http_status)
    if trace.workspace_id is None:
        # No workspace's log to write it to: counted and sampled for the operator.
        record_unmatched(conn, received, result.reason, trace.secrets)
        return result
    result = replace(result, postback_id=trace.postback_id, platform=trace.platform)
    elapsed_us = int((time.perf_counter() - started) * 1_000_000)
    write_log(
        conn,
        raw,
        trace,
        result,
        processing_us=elapsed_us,
        replay_of=replay.log_id if replay else None,
    )
    return result


def _process(
    conn: Connection,
    received: Received,
    trace: Trace,
    replay: Replay | None,
    reads: SetupReads,
    is_test: bool,
) -> Result:
    raw = received.raw
    try:
        query = _query_tree(raw)
    except Rejected:
        # Still logged in its workspace when its token can be read: a platform's bad field
        # must reach the log its user reads, not the operator's count of unmatched requests.
        _identify_workspace(conn, raw, _token_only(raw), replay, trace, reads)
        raise
    workspace_id, currency = _identify_workspace(conn, raw, query, replay, trace, reads)
    if raw.body_too_large:
        raise Rejected(f"the body is larger than {raw.body_limit} bytes", http_status=413)
    payload = merge_query(_body_tree(received), {k: v for k, v in query.items() if k != "token"})
    trace.buyer_values = buyer_values(payload, ALL_FIELDS)
    merchant, looked_up = _choose_merchant(conn, workspace_id, raw, query, payload, trace, reads)
    trace.merchant_id = merchant.id
    trace.platform = merchant.preset.name
    if merchant.preset.reshape is not None:
        payload = merchant.preset.reshape(payload)
        trace.buyer_values = buyer_values(payload, ALL_FIELDS)
    _note_secrets(trace, merchant, payload, query)
    if not merchant.allows_ip(raw.source_ip):
        raise Rejected(f"IP {raw.source_ip} is not in the merchant's allowlist", http_status=403)
    if replay is None:
        failure = check_secret(
            merchant,
            payload=payload,
            headers=raw.header_map,
            query={k: str(v) for k, v in query.items()},
            body=raw.body,
        )
        if failure:
            trace.auth_failed = True
            # A body of another platform lacks the secret where this one puts it: say so.
            misfit = misfit_reason(merchant, payload)
            raise Rejected(f"{failure}; {misfit}" if misfit else failure, http_status=401)
    names = reads.get(("event types", workspace_id), lambda: event_type_names(conn, workspace_id))
    fields = _map(merchant, payload, names, trace)
    trace.fields = fields
    trace.click_id = fields.click_id
    if fields.status == IGNORE:
        return Result(Outcome.IGNORED, _ignored_reason(fields), event_type=fields.event_type)
    if fields.click_id is None:
        raise RuntimeError("the mapping let a counted event through without a click id")
    attribution = (
        looked_up
        if looked_up is not None and looked_up.raw_click_id == fields.click_id
        else find_click(conn, workspace_id, fields.click_id)
    )
    trace.campaign_id = attribution.campaign_id
    reported = Reported(
        event_type=fields.event_type,
        status=Status(fields.status),
        value=fields.value,
        currency=fields.currency or currency,
        txid=fields.txid,
        buyer=read_buyer_hashes(payload, buyer_fields(merchant.preset.name)),
        is_test=is_test,
        occurred_at=fields.occurred_at,
    )
    return _record(conn, workspace_id, merchant, reported, attribution, trace, replay, currency)


def _record(
    conn: Connection,
    workspace_id: str,
    merchant: Merchant,
    reported: Reported,
    attribution: Attribution,
    trace: Trace,
    replay: Replay | None,
    workspace_currency: str,
) -> Result:
    try:
        recorded = record_conversion(
            conn,
            workspace_id=workspace_id,
            merchant_id=merchant.id,
            reported=reported,
            attribution=attribution,
            dedupe=Dedupe(merchant.dedupe_mode, timedelta(minutes=merchant.dedupe_window_minutes)),
            postback_id=trace.postback_id,
            actor="replay" if replay else "postback",
            now=datetime.now(UTC),
            workspace_currency=workspace_currency,
        )
    except AmountError as exc:
        raise Rejected(str(exc)) from None
    return Result(
        recorded.outcome,
        recorded.reason,
        conversion_id=recorded.conversion_id,
        event_type=reported.event_type,
        status=recorded.status,
        details=recorded.details,
    )


def _query_tree(raw: RawPostback) -> Tree:
    try:
        return pairs_to_tree(parse_form(raw.query))
    except PayloadError as exc:
        raise Rejected(f"query string: {exc}") from None


def _token_only(raw: RawPostback) -> Tree:
    """The token of a query string that is otherwise unusable.

    >>> from datetime import UTC, datetime
    >>> raw = RawPostback("GET", "/pb", "txid=T%00&token=abc", (), b"", "", "", datetime.now(UTC))
    >>> _token_only(raw)
    {'token': 'abc'}
    """
    tokens = [value for name, value in parse_qsl(raw.query) if name == "token"]
    return {"token": tokens[0]} if len(tokens) == 1 and is_text(tokens[0]) else {}


def _body_tree(received: Received) -> Tree:
    if isinstance(received.body, PayloadError):
        raise Rejected(str(received.body))
    return received.body


def _identify_workspace(
    conn: Connection,
    raw: RawPostback,
    query: Tree,
    replay: Replay | None,
    trace: Trace,
    reads: SetupReads,
) -> tuple[str, str]:
    """(workspace id, its currency), from the token, else from the custom tracking domain."""
    token = query.get("token")
    if replay is not None:
        row = conn.execute(_WORKSPACE_BY_ID, {"id": replay.workspace_id}).first()
    elif isinstance(token, str) and token:
        trace.secrets.append(token)
        row = reads.get(("token", token), lambda: _workspace_by_token(conn, token))
        if row is None:
            raise Rejected("unknown token", http_status=401)
    else:
        row = conn.execute(_WORKSPACE_BY_HOST, {"host": raw.host}).first()
        if row is None:
            raise Rejected(
                "no workspace token, and the host is no custom tracking domain", http_status=401
            )
    if row is None:
        raise Rejected("the workspace no longer exists")
    trace.workspace_id = row.id
    trace.keeps_buyer_data = row.keeps_buyer_data
    trace.currency = row.currency
    trace.secrets.append(row.postback_token)
    return row.id, row.currency


def _choose_merchant(
    conn: Connection,
    workspace_id: str,
    raw: RawPostback,
    query: Tree,
    payload: Tree,
    trace: Trace,
    reads: SetupReads,
) -> tuple[Merchant, Attribution | None]:
    """The merchant named in the URL, else the matched click's campaign's, else generic; and
    the click the generic click id names, when it was looked up for that.

    Without a merchant of the workspace, the sender may be any platform (a Hotmart webhook
    pasted as /postback, or sent to a mistyped /pb/{key}): every preset's secret field is masked.
    """
    key = raw.merchant_key or (
        query.get("merchant") if isinstance(query.get("merchant"), str) else None
    )
    if key:
        merchant = reads.get(
            ("merchant key", workspace_id, str(key)),
            lambda: load_merchant(conn, workspace_id, key=str(key)),
        )
        if merchant is None:
            _note_unknown_secrets(trace, payload, query)
            raise Rejected(f"unknown merchant {str(key)[:40]!r}; create it in the workspace first")
        return merchant, None
    looked_up = None
    click_id = read_field(GENERIC, payload, "click_id")
    if click_id:
        looked_up, merchant_id = find_click_and_merchant(conn, workspace_id, click_id)
        if merchant_id:
            found = reads.get(
                ("merchant", workspace_id, merchant_id),
                lambda: load_merchant(conn, workspace_id, merchant_id=merchant_id),
            )
            if found is not None:
                return found, looked_up
    _note_unknown_secrets(trace, payload, query)
    return GENERIC, looked_up


def _workspace_by_token(conn: Connection, token: str) -> Row[str, str, str, bool] | None:
    return conn.execute(_WORKSPACE_BY_TOKEN, {"token": token}).first()


def _ignored_reason(fields: Fields) -> str:
    """Name both the event and the status: Braip's event is always STATUS_ALTERADO, so the
    event alone did not say which status the mapping left out."""
    words = [
        f"{name} {value!r}"
        for name, value in (("event", fields.platform_event), ("status", fields.platform_status))
        if value
    ]
    return f"the mapping does not count {', '.join(words) or 'this postback'}"


def _map(merchant: Merchant, payload: Tree, event_types: frozenset[str], trace: Trace) -> Fields:
    try:
        return map_fields(merchant, payload, event_types=event_types)
    except MappingError as exc:
        trace.read = exc.read
        trace.click_id = exc.read.get("click_id")
        raise Rejected(str(exc)) from None


def _note_secrets(trace: Trace, merchant: Merchant, payload: Tree, query: Tree) -> None:
    """What the log masks for this merchant: its secret, and whatever the request sent where
    a secret or signature goes (right or wrong), in the body, the query or a header (whose
    value the log then masks wherever else it appears)."""
    paths = (*merchant.paths("secret"), *merchant.preset.secret_names, "signature")
    names = {path.lower() for path in paths}
    if merchant.preset.auth is AuthKind.HMAC_SHA256_HEADER:
        names.add(merchant.preset.auth_param.lower())
    trace.secret_headers |= names
    if merchant.secret:
        trace.secrets.append(merchant.secret)
    trace.secrets.extend(values_at(paths, payload, query))


def _note_unknown_secrets(trace: Trace, payload: Tree, query: Tree) -> None:
    """Without a merchant of the workspace the sender may be any platform: whatever sits in
    any preset's secret field or header is masked."""
    trace.secret_headers |= KNOWN_SECRET_HEADERS
    trace.secrets.extend(values_at(KNOWN_SECRET_FIELDS, payload, query))
