"""GET /healthz (the process answers) and GET /readyz (it can do its work), for load balancers,
orchestrators and uptime checks. Neither needs a key; neither tells anything of a workspace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from trilha.readiness import check_readiness
from trilha.web.auth import runtime_of

router = APIRouter(include_in_schema=False)
NO_STORE = {"cache-control": "no-store"}


@router.get("/healthz")
async def healthz() -> PlainTextResponse:
    return PlainTextResponse("ok\n", headers=NO_STORE)


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    runtime = runtime_of(request)
    readiness = await check_readiness(
        runtime.read_engine,
        worker_age=timedelta(seconds=runtime.settings.ready_worker_age),
        now=datetime.now(UTC),
        reports_engine=runtime.reports_engine,
    )
    if not readiness.is_ready:
        body = {"status": "unavailable", "failing": readiness.failing, "checks": readiness.checks}
        return JSONResponse(body, status_code=503, headers=NO_STORE)
    return JSONResponse({"status": "ready", "checks": readiness.checks}, headers=NO_STORE)
