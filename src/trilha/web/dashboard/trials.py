"""Test postbacks from a merchant's page: a sample sale shaped like the merchant's platform
sends it, through the real pipeline, answered with its outcome and the log entry it made."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Response

from trilha.conversions.status import Status
from trilha.errors import InvalidInput
from trilha.merchants import get_merchant
from trilha.money import AmountError, parse_amount
from trilha.postbacks.trial import Trial, TrialSale, send_test_postback
from trilha.visitors import client_ip
from trilha.web.auth import Db
from trilha.web.dashboard.merchants import NEW_TRIAL, merchant_form, stored_values
from trilha.web.dashboard.pages import InWorkspace, Page, read_form
from trilha.web.dashboard.postback_log import request_text
from trilha.web.dashboard.responses import DashboardRoute
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)


@router.post("/w/{workspace_id}/merchants/{merchant_id}/test")
async def send_test(merchant_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    merchant = await get_merchant(conn, page.workspace.id, merchant_id)
    form = await read_form(page.request)
    values = {name: form[f"trial_{name}"].strip() for name in NEW_TRIAL}
    try:
        sale = trial_sale(values)
        trial = await send_test_postback(
            conn, page.workspace, merchant.id, sale, source_ip=_source_ip(page), now=_now()
        )
    except InvalidInput as exc:
        errors = {f"trial_{name}": message for name, message in exc.fields.items()}
        context = {"values": values, "errors": errors}
        return await merchant_form(
            page, conn, stored_values(merchant), {}, merchant, trial=context, status_code=422
        )
    context = {"values": values, "errors": {}, "result": _result(trial)}
    return await merchant_form(page, conn, stored_values(merchant), {}, merchant, trial=context)


def trial_sale(values: dict[str, str]) -> TrialSale:
    """The form's sale; a blank click id or txid is made up by the trial."""
    try:
        status = Status(values["status"])
    except ValueError:
        raise InvalidInput({"status": f"must be one of: {', '.join(Status)}"}) from None
    try:
        value = parse_amount(values["value"] or "0")
    except AmountError as exc:
        raise InvalidInput({"value": str(exc)}) from None
    return TrialSale(
        event_type=values["event_type"],
        status=status,
        value=value,
        click_id=values["click_id"] or None,
        txid=values["txid"] or None,
    )


def _result(trial: Trial) -> dict[str, Any]:
    sent = trial.sent
    entry = {
        "method": sent.method,
        "path": sent.path,
        "query": sent.query,
        "headers": sent.headers,
        "body": sent.body,
    }
    return {
        "outcome": trial.result.outcome.value,
        "reason": trial.result.reason,
        "entry_id": trial.result.postback_id,
        "conversion_id": trial.result.conversion_id,
        "request_text": request_text(entry),
    }


def _source_ip(page: Page) -> str:
    request = page.request
    peer = request.client.host if request.client else "0.0.0.0"  # noqa: S104 -- unknown peer
    trusted = page.settings.trusted_proxies
    return client_ip(peer, request.headers.get("x-forwarded-for"), trusted)


def _now() -> datetime:
    return datetime.now(UTC)
