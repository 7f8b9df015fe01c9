"""The server-rendered dashboard: one module per section, all outside the OpenAPI schema."""

from fastapi import APIRouter

from trilha.web.dashboard import (
    api_keys,
    auth,
    campaigns,
    clicks,
    conversions,
    costs,
    domains,
    event_types,
    invitations,
    members,
    merchants,
    postback_log,
    reconciliation,
    reports,
    settings,
    sources,
    trials,
    workspaces,
)

SECTIONS = (
    auth,
    workspaces,
    campaigns,
    costs,
    sources,
    merchants,
    trials,
    clicks,
    conversions,
    postback_log,
    reconciliation,
    reports,
    domains,
    settings,
    event_types,
    members,
    invitations,
    api_keys,
)

router = APIRouter(include_in_schema=False)
for section in SECTIONS:
    router.include_router(section.router)
