"""The server-rendered dashboard: one module per section, all outside the OpenAPI schema."""

from fastapi import APIRouter

from trilha.web.dashboard import (
    api_keys,
    auth,
    campaigns,
    domains,
    members,
    settings,
    sources,
    workspaces,
)

SECTIONS = (auth, workspaces, campaigns, sources, domains, settings, members, api_keys)

router = APIRouter(include_in_schema=False)
for section in SECTIONS:
    router.include_router(section.router)
