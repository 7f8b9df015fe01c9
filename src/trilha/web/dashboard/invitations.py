"""/invite/{token}: the page an invitation link opens, to make an account and join, or to join
with the account the invitation's e-mail already has."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Response

from trilha.errors import Conflict, InvalidInput
from trilha.invitations import Pending, accept_invitation, pending_invitation
from trilha.web.auth import runtime_of, set_session_cookie
from trilha.web.dashboard.pages import Anonymous, Page, field_errors, read_form
from trilha.web.dashboard.responses import DashboardRoute, redirect, render, set_language_cookie

router = APIRouter(route_class=DashboardRoute)


@router.get("/invite/{token}")
async def invitation_page(token: str, page: Anonymous) -> Response:
    async with runtime_of(page.request).read_engine.connect() as conn:
        pending = await pending_invitation(conn, token, now=datetime.now(UTC))
    if pending is None:
        return render(page, "dashboard/auth/invite_invalid.html", {}, status_code=404)
    return _form(page, pending, {}, {})


@router.post("/invite/{token}")
async def accept(token: str, page: Anonymous) -> Response:
    form = await read_form(page.request)
    runtime = runtime_of(page.request)
    signed_in = page.user if page.session is not None else None
    try:
        joined = await accept_invitation(
            runtime.engine,
            token,
            signed_in=signed_in,
            name=form["user_name"],
            password=form["password"],
            locale=page.t.locale,
            now=datetime.now(UTC),
        )
    except (InvalidInput, Conflict) as exc:
        async with runtime.read_engine.connect() as conn:
            pending = await pending_invitation(conn, token, now=datetime.now(UTC))
        if pending is None:
            return render(page, "dashboard/auth/invite_invalid.html", {}, status_code=404)
        values = {"user_name": form["user_name"]}
        return _form(page, pending, values, field_errors(exc), status_code=422)
    if joined is None:
        return render(page, "dashboard/auth/invite_invalid.html", {}, status_code=404)
    response = redirect(page, f"/w/{joined.workspace_id}/campaigns")
    if joined.session is not None:
        set_session_cookie(response, joined.session.token, secure=page.settings.is_secure)
        set_language_cookie(page, response, joined.session.user.locale)
    return response


def _form(
    page: Page,
    pending: Pending,
    values: dict[str, str],
    errors: dict[str, str],
    *,
    status_code: int = 200,
) -> Response:
    signed_in_as = page.user.email if page.session is not None else None
    context = {
        "pending": pending,
        "values": values,
        "errors": errors,
        "signed_in_as": signed_in_as,
    }
    return render(page, "dashboard/auth/invite.html", context, status_code=status_code)
