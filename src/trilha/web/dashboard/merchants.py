"""Merchants: the sales-platform accounts postbacks come from, each a preset plus the user's
mapping (field paths, rules, secret, IP allowlist, value and dedupe choices), with the exact
postback URL to paste into the platform."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Response
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.dedupe import DedupeMode
from trilha.conversions.status import Status
from trilha.errors import Conflict, InvalidInput
from trilha.event_types import BuiltinEvent, event_type_names
from trilha.merchants import (
    MAX_WINDOW,
    MIN_SECRET,
    RULE_STATUSES,
    MerchantRow,
    create_merchant,
    delete_merchant,
    get_merchant,
    list_merchants,
    update_merchant,
)
from trilha.money import ValueUnit
from trilha.postbacks.platforms import PRESETS
from trilha.postbacks.preset import FIELDS
from trilha.web.auth import Db
from trilha.web.dashboard.pages import Form, InWorkspace, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render
from trilha.workspaces import Role

router = APIRouter(route_class=DashboardRoute)

SETTINGS = ("name", "key", "preset", "value_choice", "value_unit", "dedupe_mode")
RULE_PARTS = ("when_event", "when_status", "event_type", "status")
NEW_TRIAL = {
    "click_id": "",
    "event_type": BuiltinEvent.SALE,
    "status": "approved",
    "value": "97,00",
    "txid": "",
}
NEW_MERCHANT = {
    "name": "",
    "key": "",
    "preset": "hotmart",
    "value_choice": "gross",
    "value_unit": "",
    "dedupe_mode": "txid",
    "dedupe_window_minutes": "60",
    "hold_days": "",
    "ip_allowlist": "",
}


@router.get("/w/{workspace_id}/merchants")
async def merchant_list(page: InWorkspace, conn: Db) -> Response:
    rows = [
        {"merchant": m, "preset": PRESETS[m.preset], "postback_url": postback_url(page, m)}
        for m in await list_merchants(conn, page.workspace.id)
    ]
    return render(page, "dashboard/merchants/list.html", {"rows": rows, "section": "merchants"})


@router.get("/w/{workspace_id}/merchants/new")
async def new_merchant(page: InWorkspace, conn: Db, preset: str = "hotmart") -> Response:
    page.require(Role.MEMBER)
    values = {**NEW_MERCHANT, "preset": preset if preset in PRESETS else "hotmart"}
    return await merchant_form(page, conn, values, {})


@router.get("/w/{workspace_id}/merchants/rule-row")
async def rule_row(page: InWorkspace, conn: Db) -> Response:
    """One more empty rule row (htmx)."""
    context = {"rule": None, "event_types": await _event_types(page, conn)}
    return render(page, "partials/rule_row.html", context | {"statuses": RULE_STATUSES})


@router.post("/w/{workspace_id}/merchants")
async def add_merchant(page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    form = await read_form(page.request)
    values = _values(form)
    try:
        merchant = await create_merchant(
            conn, page.workspace.id, now=_now(), **_changes(values), **_secret(form)
        )
    except (InvalidInput, Conflict) as exc:
        return await merchant_form(page, conn, values, field_errors(exc), status_code=422)
    return redirect(page, _edit_url(page, merchant.id), "merchants.created", name=merchant.name)


@router.get("/w/{workspace_id}/merchants/{merchant_id}")
async def edit_merchant(
    merchant_id: str, page: InWorkspace, conn: Db, preset: str = ""
) -> Response:
    """``?preset=`` shows another preset's paths and rules (htmx swaps just those parts)."""
    merchant = await get_merchant(conn, page.workspace.id, merchant_id)
    values = stored_values(merchant)
    if preset in PRESETS:
        values["preset"] = preset
    return await merchant_form(page, conn, values, {}, merchant)


@router.post("/w/{workspace_id}/merchants/{merchant_id}")
async def save_merchant(merchant_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    merchant = await get_merchant(conn, page.workspace.id, merchant_id)
    form = await read_form(page.request)
    values = _values(form)
    try:
        merchant = await update_merchant(
            conn, page.workspace.id, merchant.id, now=_now(), **_changes(values), **_secret(form)
        )
    except (InvalidInput, Conflict) as exc:
        return await merchant_form(page, conn, values, field_errors(exc), merchant, status_code=422)
    return redirect(page, _edit_url(page, merchant.id), "merchants.saved", name=merchant.name)


@router.post("/w/{workspace_id}/merchants/{merchant_id}/delete")
async def remove_merchant(merchant_id: str, page: InWorkspace, conn: Db) -> Response:
    page.require(Role.MEMBER)
    merchant = await get_merchant(conn, page.workspace.id, merchant_id)
    await delete_merchant(conn, page.workspace.id, merchant.id)
    url = f"/w/{page.workspace.id}/merchants"
    return redirect(page, url, "merchants.deleted", name=merchant.name)


def postback_url(page: Page, merchant: MerchantRow) -> str | None:
    """The URL to paste into the platform, for those allowed to see the workspace's token."""
    if page.membership is None or not page.membership.role.allows(Role.MEMBER):
        return None
    return merchant.postback_url(page.settings.base_url, page.workspace.postback_token)


def _edit_url(page: Page, merchant_id: str) -> str:
    return f"/w/{page.workspace.id}/merchants/{merchant_id}"


def _now() -> datetime:
    return datetime.now(UTC)


def _values(form: Form) -> dict[str, Any]:
    """The form as typed, to save or to show again with its errors."""
    values: dict[str, Any] = {name: form[name].strip() for name in SETTINGS}
    values["dedupe_window_minutes"] = form["dedupe_window_minutes"].strip()
    values["hold_days"] = form["hold_days"].strip()
    values["ip_allowlist"] = form["ip_allowlist"]
    values["paths"] = {name: form[f"path_{name}"].strip() for name in FIELDS}
    columns = [form.getlist(f"rule_{part}") for part in RULE_PARTS]
    rows = [dict(zip(RULE_PARTS, cells, strict=True)) for cells in zip(*columns, strict=False)]
    # A row without a condition is an unused blank row.
    values["rules"] = [r for r in rows if r["when_event"].strip() or r["when_status"].strip()]
    return values


def _changes(values: dict[str, Any]) -> dict[str, Any]:
    """The merchant fields to store, for trilha.merchants to check."""
    window = values["dedupe_window_minutes"]
    return {
        **{name: values[name] for name in SETTINGS},
        "value_unit": values["value_unit"] or None,
        "dedupe_window_minutes": int(window) if window.isascii() and window.isdigit() else window,
        "hold_days": values["hold_days"] or None,
        "ip_allowlist": [
            line.strip() for line in values["ip_allowlist"].splitlines() if line.strip()
        ],
        "field_paths": {name: path for name, path in values["paths"].items() if path},
        "rules": [{part: rule[part].strip() for part in RULE_PARTS} for rule in values["rules"]],
    }


def _secret(form: Form) -> dict[str, str | None]:
    """The secret is write-only: a new one replaces it, "clear" removes it, blank keeps it."""
    if form["clear_secret"]:
        return {"secret": None}
    return {"secret": form["secret"]} if form["secret"].strip() else {}


def stored_values(merchant: MerchantRow) -> dict[str, Any]:
    return {
        **{name: str(getattr(merchant, name) or "") for name in SETTINGS},
        "dedupe_window_minutes": str(merchant.dedupe_window_minutes),
        "hold_days": "" if merchant.hold_days is None else str(merchant.hold_days),
        "ip_allowlist": "\n".join(merchant.ip_allowlist),
        "paths": {name: merchant.field_paths.get(name, "") for name in FIELDS},
        "rules": [
            {part: str(rule.get(part) or "") for part in RULE_PARTS} for rule in merchant.rules
        ],
    }


async def _event_types(page: Page, conn: AsyncConnection) -> list[str]:
    return sorted(await conn.run_sync(event_type_names, page.workspace.id))


async def merchant_form(
    page: Page,
    conn: AsyncConnection,
    values: dict[str, Any],
    errors: dict[str, str],
    merchant: MerchantRow | None = None,
    *,
    trial: dict[str, Any] | None = None,
    status_code: int = 200,
) -> Response:
    """The form; ``trial`` carries the test postback form's values and errors, or its result."""
    values = {"paths": dict.fromkeys(FIELDS, ""), "rules": [], **values}
    context = {
        "section": "merchants",
        "merchant": merchant,
        "postback_url": postback_url(page, merchant) if merchant else None,
        "values": values,
        "errors": errors,
        "known_fields": [
            *NEW_MERCHANT,
            "secret",
            *(k for k in errors if k.startswith(("rules", "field_paths"))),
        ],
        "presets": PRESETS,
        "preset": PRESETS.get(values["preset"], PRESETS["generic"]),
        "fields": FIELDS,
        "event_types": await _event_types(page, conn),
        "statuses": RULE_STATUSES,
        "dedupe_modes": [mode.value for mode in DedupeMode],
        "max_window": MAX_WINDOW,
        "min_secret": MIN_SECRET,
        "value_units": [unit.value for unit in ValueUnit],
        "trial_values": {
            f"trial_{k}": v for k, v in (trial or {}).get("values", NEW_TRIAL).items()
        },
        "trial_errors": (trial or {}).get("errors", {}),
        "trial_result": (trial or {}).get("result"),
        "trial_statuses": [(s.value, page.t(f"conversion_status.{s.value}")) for s in Status],
    }
    return render(page, "dashboard/merchants/form.html", context, status_code=status_code)
