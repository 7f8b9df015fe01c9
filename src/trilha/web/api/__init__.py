"""The REST API under /api/v1, described by OpenAPI at /api/openapi.json."""

from fastapi import APIRouter

from trilha.web.api import health

router = APIRouter(prefix="/api/v1")
router.include_router(health.router)
