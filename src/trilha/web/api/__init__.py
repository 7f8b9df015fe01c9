"""The REST API under /api/v1, described by OpenAPI at /api/openapi.json."""

from fastapi import APIRouter, Security
from fastapi.routing import APIRoute
from fastapi.security import HTTPBearer

from trilha.web.api import (
    api_keys,
    campaigns,
    clicks,
    conversions,
    costs,
    deliveries,
    destinations,
    domains,
    event_types,
    export_columns,
    health,
    invitations,
    macros,
    me,
    members,
    merchants,
    postback_log,
    presets,
    rates,
    reconciliations,
    reports,
    sources,
    workspaces,
)
from trilha.web.api.schemas import REQUEST_ERRORS

RESOURCES = (
    me,
    api_keys,
    workspaces,
    members,
    invitations,
    domains,
    sources,
    campaigns,
    costs,
    clicks,
    macros,
    presets,
    merchants,
    event_types,
    conversions,
    postback_log,
    destinations,
    deliveries,
    reports,
    rates,
    reconciliations,
    export_columns,
)

# Authentication itself happens in trilha.web.auth.api_user; this only tells OpenAPI about it.
bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key from POST /api/v1/api-keys or the dashboard: `Bearer trk_...`",
)


def operation_id(route: APIRoute) -> str:
    """The handler's name, e.g. `list_campaigns`, for readable generated clients."""
    return route.name


router = APIRouter(
    prefix="/api/v1", generate_unique_id_function=operation_id, responses=REQUEST_ERRORS
)
router.include_router(health.router)
for resource in RESOURCES:
    router.include_router(resource.router, dependencies=[Security(bearer)])
router.include_router(destinations.templates_router, dependencies=[Security(bearer)])
