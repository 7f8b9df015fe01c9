"""GET /api/v1/health: is the process up and the database answering."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from trilha.db.engine import answers
from trilha.web.api.routing import ApiRoute
from trilha.web.api.schemas import HealthOut

router = APIRouter(route_class=ApiRoute, tags=["health"])


@router.get(
    "/health",
    summary="Liveness and database check",
    response_model=HealthOut,
    responses={503: {"model": HealthOut, "description": "The database does not answer"}},
)
async def health(request: Request) -> JSONResponse:
    if not await answers(request.app.state.runtime.read_engine):
        return JSONResponse({"status": "unavailable", "database": "unreachable"}, status_code=503)
    return JSONResponse({"status": "ok", "database": "ok"})
