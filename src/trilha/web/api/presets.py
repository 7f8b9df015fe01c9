"""GET /presets: what each sales platform's preset reads, how it authenticates, how to set it up."""

from __future__ import annotations

from fastapi import APIRouter

from trilha.postbacks.platforms import PRESETS
from trilha.web.api.postback_schemas import PresetOut
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import AUTH_ERRORS
from trilha.web.auth import ApiUser

router = APIRouter(route_class=ApiRoute, tags=["merchants"], responses=AUTH_ERRORS)


@router.get("/presets", summary="List the sales-platform presets merchants start from")
async def list_presets(_user: ApiUser) -> list[PresetOut]:
    return [PresetOut.of(preset) for preset in PRESETS.values()]
