"""The macros of offer URLs: the built-in list, and a preview of a filled URL."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from trilha.clicks import preview_offer_url
from trilha.macros import BUILTIN_MACROS
from trilha.validation import require_url_template
from trilha.web.api.dependencies import InWorkspace
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS, NOT_FOUND, MacroOut, PreviewIn, PreviewOut
from trilha.web.auth import ApiUser

router = APIRouter(route_class=ApiRoute, tags=["macros"], responses=AUTH_ERRORS)


@router.get("/macros", summary="List the built-in macros")
async def list_macros(_user: ApiUser) -> list[MacroOut]:
    return [MacroOut(name=name, description=text) for name, text in BUILTIN_MACROS.items()]


@router.post(
    "/workspaces/{workspace_id}/macros/preview",
    summary="Fill an offer URL's macros for a sample click",
    responses=NOT_FOUND,
)
async def preview_macros(body: PreviewIn, membership: InWorkspace) -> PreviewOut:
    template = require_url_template(body.template, "template")
    preview = preview_offer_url(
        template, body.params, timezone=membership.workspace.timezone, now=datetime.now(UTC)
    )
    return PreviewOut(url=preview.url, unknown_macros=list(preview.unknown_macros))
