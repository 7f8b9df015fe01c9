"""receive_postback(): a postback through its stages, ending in exactly one Outcome, logged.

read → identify the workspace → choose the merchant (and check the request is its) → map (and
find the click) → protect the buyer's data → record (dedupe, status change) → enqueue the
deliveries → log, all in the caller's transaction. Each stage is a function from the last one's
value to the next. A request that matches no workspace is only counted (see
trilha.postbacks.unmatched).
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
from trilha.conversions.record import Dedupe, Recorded, Reported, record_conversion
from trilha.conversions.status import Status
from trilha.db.schema import domains, workspaces
from trilha.deliveries.outbox import enqueue_change
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
from trilha.postbacks.preset import IGNORE
from trilha.postbacks.raw import RawPostback
from trilha.postbacks.result import Rejected, Result
from trilha.postbacks.trace import Trace
from trilha.postbacks.unmatched import record_unmatched
from trilha.privacy.buyer_fields import buyer_fields
from trilha.privacy.hashes import read_buyer_hashes
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


@dataclass(frozen=True, slots=True)
class Request:
    """Stage 1, read: the request's fields. ``problem``: why it cannot be counted, told only once
    its workspace is known, so that a platform's bad field reaches the log its user reads."""

    raw: RawPostback
    token: str | None
    query: Tree
    payload: Tree  # the body's fields, plus the query's that the body lacks (not the token)
    problem: Rejected | None = None


@dataclass(frozen=True, slots=True)
class Identified:
    """Stage 2: the workspace the request names, as much of it as a postback needs."""

    id: str
    currency: str
    postback_token: str
    keeps_buyer_data: bool


@dataclass(frozen=True, slots=True)
class Sender:
    """Stage 3: the merchant the postback is read as, and its fields in that merchant's shape."""

    merchant: Merchant
    payload: Tree
    looked_up: Attribution | None  # the click the generic click id named, when looked up


def receive_postback(
    conn: Connection,
    received: Received,
    *,
    replay: Replay | None = None,
    reads: SetupReads | None = None,
    is_test: bool = False,
) -> Result:
    """The pipeline, stage by stage: read → identify the workspace → choose the merchant (and
    check that the request is its) → map → protect the buyer's data → record → enqueue the
    deliveries; then the log entry. Each stage is a function from the last one's value to the
    next; ``trace`` keeps what the log needs should a stage refuse the request.

    ``is_test``: a "send test postback" (trilha.postbacks.trial), its conversion marked so."""
    started = time.perf_counter()
    trace = Trace(postback_id=new_id())
    try:
        result = _run(conn, read_request(received), trace, replay, reads, is_test)
    except Rejected as exc:
        trace.auth_failed = exc.auth_failed
        result = Result(Outcome.INVALID, exc.reason, exc.http_status)
    if trace.workspace_id is None:
        # No workspace's log to write it to: counted and sampled for the operator.
        record_unmatched(conn, received, result.reason, trace.secrets)
        return result
    if result.postback_id is None:  # refused on its way: the log entry is still its
        result = replace(result, postback_id=trace.postback_id, platform=trace.platform)
    elapsed_us = int((time.perf_counter() - started) * 1_000_000)
    write_log(
        conn,
        received.raw,
        trace,
        result,
        processing_us=elapsed_us,
        replay_of=replay.log_id if replay else None,
    )
    return result


def _run(
    conn: Connection,
    request: Request,
    trace: Trace,
    replay: Replay | None,
    reads: SetupReads | None,
    is_test: bool,
) -> Result:
    reads = reads or SetupReads()
    if request.token is not None:
        trace.secrets.append(request.token)
    workspace = identify_workspace(conn, request, replay, reads)
    trace.at_workspace(workspace.id, workspace.currency, workspace.keeps_buyer_data)
    trace.secrets.append(workspace.postback_token)
    if request.problem is not None:
        raise request.problem
    trace.payload = request.payload
    try:
        sender = choose_merchant(conn, workspace, request, reads)
    except Rejected:
        trace.note_unknown_secrets(request.payload, request.query)
        raise
    trace.at_merchant(sender.merchant, sender.payload, request.query)
    check_sender(sender, request, replay)
    fields = map_postback(conn, workspace, sender, reads, trace)
    if fields.status == IGNORE:
        return Result(
            Outcome.IGNORED,
            _ignored_reason(fields),
            event_type=fields.event_type,
            postback_id=trace.postback_id,
            platform=trace.platform,
        )
    attribution = find_sale_click(conn, workspace, sender, fields)
    trace.campaign_id = attribution.campaign_id
    reported = protect_buyer(fields, sender, workspace, is_test)
    recorded = record(conn, workspace, sender, reported, attribution, trace, replay)
    enqueued = enqueue(conn, recorded, datetime.now(UTC))
    return Result(
        recorded.outcome,
        recorded.reason,
        conversion_id=recorded.conversion_id,
        event_type=reported.event_type,
        status=recorded.status,
        details=recorded.details,
        enqueued=enqueued,
        postback_id=trace.postback_id,
        platform=trace.platform,
    )


def read_request(received: Received) -> Request:
    """Stage 1: the query's and the body's fields, or the reason they cannot be read."""
    raw = received.raw
    try:
        query = _query_tree(raw)
    except Rejected as exc:
        # Its token, if that alone can be read, still names the workspace to log it in.
        return Request(raw, _token_only(raw), {}, {}, exc)
    token = query.get("token")
    fields = {k: v for k, v in query.items() if k != "token"}
    problem = None
    if raw.body_too_large:
        problem = Rejected(f"the body is larger than {raw.body_limit} bytes", http_status=413)
    elif isinstance(received.body, PayloadError):
        problem = Rejected(str(received.body))
    body = received.body if isinstance(received.body, dict) else {}
    payload = merge_query(body, fields)
    return Request(
        raw, token if isinstance(token, str) and token else None, query, payload, problem
    )


def identify_workspace(
    conn: Connection, request: Request, replay: Replay | None, reads: SetupReads
) -> Identified:
    """Stage 2: the workspace, by its token, else by the custom tracking domain."""
    token = request.token
    if replay is not None:
        found = _identified(conn.execute(_WORKSPACE_BY_ID, {"id": replay.workspace_id}).first())
        if found is None:
            raise Rejected("the workspace no longer exists")
    elif token is not None:
        found = reads.get(("token", token), lambda: _workspace_by_token(conn, token))
        if found is None:
            raise Rejected("unknown token", http_status=401)
    else:
        found = _identified(conn.execute(_WORKSPACE_BY_HOST, {"host": request.raw.host}).first())
        if found is None:
            raise Rejected(
                "no workspace token, and the host is no custom tracking domain", http_status=401
            )
    return found


def choose_merchant(
    conn: Connection, workspace: Identified, request: Request, reads: SetupReads
) -> Sender:
    """Stage 3: the merchant named in the URL, else the matched click's campaign's, else
    generic; its fields reshaped as its preset says."""
    merchant, looked_up = _merchant(conn, workspace.id, request, reads)
    payload = request.payload
    if merchant.preset.reshape is not None:
        payload = merchant.preset.reshape(payload)
    return Sender(merchant, payload, looked_up)


def check_sender(sender: Sender, request: Request, replay: Replay | None) -> None:
    """Stage 3, its end: the request comes from the merchant (its IP, its secret or signature);
    a replayed request was checked when it first came."""
    merchant, raw = sender.merchant, request.raw
    if not merchant.allows_ip(raw.source_ip):
        raise Rejected(f"IP {raw.source_ip} is not in the merchant's allowlist", http_status=403)
    if replay is not None:
        return
    failure = check_secret(
        merchant,
        payload=sender.payload,
        headers=raw.header_map,
        query={k: str(v) for k, v in request.query.items()},
        body=raw.body,
    )
    if failure:
        # A body of another platform lacks the secret where this one puts it: say so.
        misfit = misfit_reason(merchant, sender.payload)
        reason = f"{failure}; {misfit}" if misfit else failure
        raise Rejected(reason, http_status=401, auth_failed=True)


def map_postback(
    conn: Connection, workspace: Identified, sender: Sender, reads: SetupReads, trace: Trace
) -> Fields:
    """Stage 4: the postback's fields in trilha's words."""
    names = reads.get(("event types", workspace.id), lambda: event_type_names(conn, workspace.id))
    try:
        fields = map_fields(sender.merchant, sender.payload, event_types=names)
    except MappingError as exc:
        trace.read = exc.read
        trace.click_id = exc.read.get("click_id")
        raise Rejected(str(exc)) from None
    trace.fields = fields
    trace.click_id = fields.click_id
    return fields


def find_sale_click(
    conn: Connection, workspace: Identified, sender: Sender, fields: Fields
) -> Attribution:
    """Stage 4, its end: the click a counted event lands on (none: an orphan)."""
    if fields.click_id is None:
        raise RuntimeError("the mapping let a counted event through without a click id")
    looked_up = sender.looked_up
    if looked_up is not None and looked_up.raw_click_id == fields.click_id:
        return looked_up
    return find_click(conn, workspace.id, fields.click_id)


def protect_buyer(fields: Fields, sender: Sender, workspace: Identified, is_test: bool) -> Reported:
    """Stage 5: the sale as a conversion keeps it, the buyer's e-mail and phone only hashed.
    (The log masks the buyer's data itself: trilha.postbacks.log.)"""
    return Reported(
        event_type=fields.event_type,
        status=Status(fields.status),
        value=fields.value,
        currency=fields.currency or workspace.currency,
        txid=fields.txid,
        buyer=read_buyer_hashes(sender.payload, buyer_fields(sender.merchant.preset.name)),
        is_test=is_test,
        occurred_at=fields.occurred_at,
    )


def record(
    conn: Connection,
    workspace: Identified,
    sender: Sender,
    reported: Reported,
    attribution: Attribution,
    trace: Trace,
    replay: Replay | None,
) -> Recorded:
    """Stage 6: the conversion recorded once, or its status changed."""
    merchant = sender.merchant
    try:
        return record_conversion(
            conn,
            workspace_id=workspace.id,
            merchant_id=merchant.id,
            reported=reported,
            attribution=attribution,
            dedupe=Dedupe(merchant.dedupe_mode, timedelta(minutes=merchant.dedupe_window_minutes)),
            postback_id=trace.postback_id,
            actor="replay" if replay else "postback",
            now=datetime.now(UTC),
            workspace_currency=workspace.currency,
        )
    except AmountError as exc:
        raise Rejected(str(exc)) from None


def enqueue(conn: Connection, recorded: Recorded, now: datetime) -> int:
    """Stage 7: the deliveries the change calls for, in the same transaction; how many."""
    if recorded.change is None:
        return 0
    change = recorded.change
    return enqueue_change(conn, change.conversion, status=change.status, now=now)


def _query_tree(raw: RawPostback) -> Tree:
    try:
        return pairs_to_tree(parse_form(raw.query))
    except PayloadError as exc:
        raise Rejected(f"query string: {exc}") from None


def _token_only(raw: RawPostback) -> str | None:
    """The token of a query string that is otherwise unusable.

    >>> from datetime import UTC, datetime
    >>> raw = RawPostback("GET", "/pb", "txid=T%00&token=abc", (), b"", "", "", datetime.now(UTC))
    >>> _token_only(raw)
    'abc'
    """
    tokens = [value for name, value in parse_qsl(raw.query) if name == "token"]
    return tokens[0] if len(tokens) == 1 and tokens[0] and is_text(tokens[0]) else None


def _merchant(
    conn: Connection, workspace_id: str, request: Request, reads: SetupReads
) -> tuple[Merchant, Attribution | None]:
    """The merchant named in the URL, else the matched click's campaign's, else generic; and
    the click the generic click id names, when it was looked up for that."""
    query = request.query
    key = request.raw.merchant_key or (
        query.get("merchant") if isinstance(query.get("merchant"), str) else None
    )
    if key:
        merchant = reads.get(
            ("merchant key", workspace_id, str(key)),
            lambda: load_merchant(conn, workspace_id, key=str(key)),
        )
        if merchant is None:
            raise Rejected(f"unknown merchant {str(key)[:40]!r}; create it in the workspace first")
        return merchant, None
    looked_up = None
    click_id = read_field(GENERIC, request.payload, "click_id")
    if click_id:
        looked_up, merchant_id = find_click_and_merchant(conn, workspace_id, click_id)
        if merchant_id:
            found = reads.get(
                ("merchant", workspace_id, merchant_id),
                lambda: load_merchant(conn, workspace_id, merchant_id=merchant_id),
            )
            if found is not None:
                return found, looked_up
    return GENERIC, looked_up


def _workspace_by_token(conn: Connection, token: str) -> Identified | None:
    return _identified(conn.execute(_WORKSPACE_BY_TOKEN, {"token": token}).first())


def _identified(row: Row[str, str, str, bool] | None) -> Identified | None:
    return None if row is None else Identified(*row)


def _ignored_reason(fields: Fields) -> str:
    """Name both the event and the status: Braip's event is always STATUS_ALTERADO, so the
    event alone did not say which status the mapping left out."""
    words = [
        f"{name} {value!r}"
        for name, value in (("event", fields.platform_event), ("status", fields.platform_status))
        if value
    ]
    return f"the mapping does not count {', '.join(words) or 'this postback'}"
