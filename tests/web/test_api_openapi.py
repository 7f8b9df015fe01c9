"""The OpenAPI document describes every route fully, and docs/api.md documents each one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.web.callers import make_owner

DOCS = Path(__file__).parent.parent.parent / "docs" / "api.md"
PREFIX = "/api/v1"
WS = "/workspaces/{workspace_id}"
ROUTES = {
    ("GET", "/health"),
    ("GET", "/me"),
    ("PATCH", "/me"),
    ("GET", "/api-keys"),
    ("POST", "/api-keys"),
    ("DELETE", "/api-keys/{key_id}"),
    ("GET", "/workspaces"),
    ("POST", "/workspaces"),
    ("GET", WS),
    ("PATCH", WS),
    ("DELETE", WS),
    ("POST", f"{WS}/postback-token/rotate"),
    ("POST", f"{WS}/buyers/forget"),
    ("GET", f"{WS}/members"),
    ("POST", f"{WS}/members"),
    ("PATCH", f"{WS}/members/{{user_id}}"),
    ("DELETE", f"{WS}/members/{{user_id}}"),
    ("GET", f"{WS}/invitations"),
    ("POST", f"{WS}/invitations"),
    ("DELETE", f"{WS}/invitations/{{invitation_id}}"),
    *(
        (method, path)
        for resource, item in [
            ("domains", "domain_id"),
            ("sources", "source_id"),
            ("campaigns", "campaign_id"),
        ]
        for method, path in [
            ("GET", f"{WS}/{resource}"),
            ("POST", f"{WS}/{resource}"),
            ("GET", f"{WS}/{resource}/{{{item}}}"),
            ("PATCH", f"{WS}/{resource}/{{{item}}}"),
            ("DELETE", f"{WS}/{resource}/{{{item}}}"),
        ]
    ),
    ("POST", f"{WS}/domains/{{domain_id}}/verify"),
    ("GET", f"{WS}/clicks"),
    ("GET", f"{WS}/clicks/{{click_id}}"),
    ("GET", "/macros"),
    ("POST", f"{WS}/macros/preview"),
    ("GET", "/presets"),
    ("GET", f"{WS}/merchants"),
    ("POST", f"{WS}/merchants"),
    ("GET", f"{WS}/merchants/{{merchant_id}}"),
    ("PATCH", f"{WS}/merchants/{{merchant_id}}"),
    ("DELETE", f"{WS}/merchants/{{merchant_id}}"),
    ("POST", f"{WS}/merchants/{{merchant_id}}/test"),
    ("GET", f"{WS}/event-types"),
    ("POST", f"{WS}/event-types"),
    ("PATCH", f"{WS}/event-types/{{event_type_id}}"),
    ("DELETE", f"{WS}/event-types/{{event_type_id}}"),
    ("GET", f"{WS}/conversions"),
    ("GET", f"{WS}/conversions/{{conversion_id}}"),
    ("POST", f"{WS}/conversions/{{conversion_id}}/attach"),
    ("DELETE", f"{WS}/conversions/{{conversion_id}}"),
    ("GET", f"{WS}/orphans"),
    ("GET", f"{WS}/postbacks"),
    ("GET", f"{WS}/postbacks/{{postback_id}}"),
    ("POST", f"{WS}/postbacks/replay"),
    ("GET", f"{WS}/reports"),
    ("GET", f"{WS}/reports/csv"),
    ("GET", f"{WS}/reports/columns"),
    ("PUT", f"{WS}/reports/columns"),
    ("GET", f"{WS}/rates"),
    ("PUT", f"{WS}/rates"),
    ("DELETE", f"{WS}/rates/{{rate_id}}"),
    ("GET", f"{WS}/merchants/{{merchant_id}}/export-columns"),
    ("PUT", f"{WS}/merchants/{{merchant_id}}/export-columns"),
    ("GET", f"{WS}/reconciliations"),
    ("POST", f"{WS}/reconciliations"),
    ("GET", f"{WS}/reconciliations/{{reconciliation_id}}"),
    ("GET", f"{WS}/reconciliations/{{reconciliation_id}}/csv"),
    ("GET", f"{WS}/campaigns/{{campaign_id}}/costs/model"),
    ("PUT", f"{WS}/campaigns/{{campaign_id}}/costs/model"),
    ("GET", f"{WS}/campaigns/{{campaign_id}}/costs/days"),
    ("PUT", f"{WS}/campaigns/{{campaign_id}}/costs/days/{{day}}"),
    ("DELETE", f"{WS}/campaigns/{{campaign_id}}/costs/days/{{day}}"),
    ("POST", f"{WS}/campaigns/{{campaign_id}}/costs/days/import"),
}


async def test_it_serves_an_openapi_document_listing_every_route(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/api/openapi.json")

    assert response.status_code == 200
    assert set(operations(response.json())) == ROUTES


async def test_it_describes_each_route_with_summary_tags_and_answer(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/api/openapi.json")).json()

    incomplete = [
        route for route, operation in operations(document).items() if not is_complete(operation)
    ]

    assert incomplete == []


async def test_a_patch_field_is_nullable_only_where_null_clears_it(
    client: httpx.AsyncClient,
) -> None:
    schemas = (await client.get("/api/openapi.json")).json()["components"]["schemas"]
    campaign = schemas["CampaignPatch"]["properties"]
    user = schemas["UserPatch"]["properties"]

    assert campaign["name"] == {
        "type": "string",
        "maxLength": 200,
        "pattern": "\\S",
        "title": "Name",
    }
    assert campaign["status"] == {"$ref": "#/components/schemas/CampaignStatus"}
    assert {"type": "null"} in campaign["fallback_url"]["anyOf"]
    assert user["name"]["maxLength"] == 120
    patches = [schema for name, schema in schemas.items() if name.endswith("Patch")]
    assert len(patches) >= 8
    assert all("default" not in field for p in patches for field in p["properties"].values())


async def test_it_names_each_operation_after_its_handler(client: httpx.AsyncClient) -> None:
    document = (await client.get("/api/openapi.json")).json()

    ids = [operation["operationId"] for operation in operations(document).values()]

    assert "list_campaigns" in ids
    assert len(ids) == len(set(ids))


def operations(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method.upper(), path.removeprefix(PREFIX)): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }


def is_complete(operation: dict[str, Any]) -> bool:
    """A summary, a tag, and a schema for the success answer (204 has no body), in JSON or in
    the one media type the route answers in (a CSV download)."""
    [success] = [code for code in operation["responses"] if code.startswith("2")]
    content = operation["responses"][success].get("content", {})
    has_schema = success == "204" or any(media.get("schema") for media in content.values())
    return bool(operation.get("summary")) and bool(operation.get("tags")) and has_schema


@pytest.mark.parametrize(("method", "path"), sorted(ROUTES))
def test_it_documents_each_route(method: str, path: str) -> None:
    assert f"`{method} {PREFIX}{path}`" in DOCS.read_text()


# (schema, field, the rule it states, POST path under the workspace ("" for /api/v1 itself),
# a body the server takes, a value the rule allows at its edge, one it forbids)
RULE_CASES = [
    ("WorkspaceIn", "name", "maxLength", "/workspaces", {}, "w" * 120, "w" * 121),
    ("WorkspaceIn", "currency", "pattern", "/workspaces", {"name": "W"}, " usd ", "BRLX"),
    ("ApiKeyIn", "name", "maxLength", "/api-keys", {}, "k" * 120, "k" * 121),
    ("SourceIn", "name", "pattern", "{ws}/sources", {}, " Facebook ", "   "),
    ("CampaignIn", "name", "maxLength", "{ws}/campaigns", {"slug": "a"}, "c" * 200, "c" * 201),
    ("CampaignIn", "slug", "pattern", "{ws}/campaigns", {"name": "C"}, "BF-24_x", "-bf"),
    ("CampaignIn", "offer_url", "pattern", "{ws}/campaigns", {}, "HTTPS://o.test/", "ftp://o.test"),
    ("MerchantIn", "key", "pattern", "{ws}/merchants", {}, "Loja_1", "loja/1"),
    ("MerchantIn", "dedupe_window_minutes", "maximum", "{ws}/merchants", {}, 10080, 10081),
    ("EventTypeIn", "name", "pattern", "{ws}/event-types", {}, "trial_2", "2trial"),
]
BODIES = {
    "{ws}/campaigns": {"name": "C", "slug": "c", "offer_url": "https://o.test/?c={click_id}"},
    "{ws}/merchants": {"key": "loja", "name": "Loja", "preset": "generic"},
}


@pytest.mark.parametrize(
    ("schema", "field", "rule", "path", "body", "allowed", "forbidden"),
    RULE_CASES,
    ids=[f"{case[0]}.{case[1]}" for case in RULE_CASES],
)
async def test_each_rule_the_schema_states_is_one_the_server_keeps(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    schema: str,
    field: str,
    rule: str,
    path: str,
    body: dict[str, Any],
    allowed: object,
    forbidden: object,
) -> None:
    owner, workspace = await make_owner(db)
    document = (await client.get("/api/openapi.json")).json()
    url = PREFIX + path.format(ws=f"/workspaces/{workspace.id}")
    base = {**BODIES.get(path, {}), **body}

    kept = await client.post(url, json={**base, field: allowed}, headers=owner.headers)
    refused = await client.post(url, json={**base, field: forbidden}, headers=owner.headers)

    assert rule in document["components"]["schemas"][schema]["properties"][field]
    assert kept.status_code == 201, kept.text
    assert refused.status_code == 422
    assert field in refused.json()["errors"]
