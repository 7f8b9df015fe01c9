"""Who may call what: every API route (from the served OpenAPI document) and every dashboard
page (from the dashboard's route table), for an anonymous caller, a member of another workspace
and a viewer, against real rows in two workspaces.

A route missing from ACCESS fails test_every_route_is_in_the_matrix until it is listed, so a new
route is covered from the day it is added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import now
from tests.web.callers import Caller, make_member
from tests.web.estate import Estate, build_estate
from trilha.accounts import User, find_session, start_session
from trilha.web.auth import CSRF_HEADER, SESSION_COOKIE
from trilha.web.dashboard import SECTIONS
from trilha.workspaces import Role


class Access(StrEnum):
    """The least a caller needs for a route."""

    PUBLIC = "public"  # anyone, signed in or not
    SIGNED_IN = "signed in"  # any user; the route names no workspace
    VIEWER = "viewer"  # any role in the workspace of the path
    MEMBER = "member"
    OWNER = "owner"


ROLE_NEEDED = {Access.VIEWER: Role.VIEWER, Access.MEMBER: Role.MEMBER, Access.OWNER: Role.OWNER}

W = "/api/v1/workspaces/{workspace_id}"
API: dict[str, Access] = {
    "GET /api/v1/health": Access.PUBLIC,
    "GET /api/v1/me": Access.SIGNED_IN,
    "PATCH /api/v1/me": Access.SIGNED_IN,
    "GET /api/v1/api-keys": Access.SIGNED_IN,
    "POST /api/v1/api-keys": Access.SIGNED_IN,
    "DELETE /api/v1/api-keys/{key_id}": Access.SIGNED_IN,
    "GET /api/v1/workspaces": Access.SIGNED_IN,
    "POST /api/v1/workspaces": Access.SIGNED_IN,
    "GET /api/v1/macros": Access.SIGNED_IN,
    "GET /api/v1/presets": Access.SIGNED_IN,
    f"GET {W}": Access.VIEWER,
    f"PATCH {W}": Access.OWNER,
    f"DELETE {W}": Access.OWNER,
    f"POST {W}/postback-token/rotate": Access.OWNER,
    f"GET {W}/members": Access.VIEWER,
    f"POST {W}/members": Access.OWNER,
    f"PATCH {W}/members/{{user_id}}": Access.OWNER,
    f"DELETE {W}/members/{{user_id}}": Access.OWNER,
    f"GET {W}/invitations": Access.OWNER,
    f"POST {W}/invitations": Access.OWNER,
    f"DELETE {W}/invitations/{{invitation_id}}": Access.OWNER,
    f"GET {W}/domains": Access.VIEWER,
    f"POST {W}/domains": Access.MEMBER,
    f"GET {W}/domains/{{domain_id}}": Access.VIEWER,
    f"PATCH {W}/domains/{{domain_id}}": Access.MEMBER,
    f"DELETE {W}/domains/{{domain_id}}": Access.MEMBER,
    f"POST {W}/domains/{{domain_id}}/verify": Access.MEMBER,
    f"GET {W}/sources": Access.VIEWER,
    f"POST {W}/sources": Access.MEMBER,
    f"GET {W}/sources/{{source_id}}": Access.VIEWER,
    f"PATCH {W}/sources/{{source_id}}": Access.MEMBER,
    f"DELETE {W}/sources/{{source_id}}": Access.MEMBER,
    f"GET {W}/campaigns": Access.VIEWER,
    f"POST {W}/campaigns": Access.MEMBER,
    f"GET {W}/campaigns/{{campaign_id}}": Access.VIEWER,
    f"PATCH {W}/campaigns/{{campaign_id}}": Access.MEMBER,
    f"DELETE {W}/campaigns/{{campaign_id}}": Access.MEMBER,
    f"GET {W}/clicks": Access.VIEWER,
    f"GET {W}/clicks/{{click_id}}": Access.VIEWER,
    f"POST {W}/macros/preview": Access.VIEWER,
    f"GET {W}/merchants": Access.VIEWER,
    f"POST {W}/merchants": Access.MEMBER,
    f"GET {W}/merchants/{{merchant_id}}": Access.VIEWER,
    f"PATCH {W}/merchants/{{merchant_id}}": Access.MEMBER,
    f"DELETE {W}/merchants/{{merchant_id}}": Access.MEMBER,
    f"POST {W}/merchants/{{merchant_id}}/test": Access.MEMBER,
    f"GET {W}/event-types": Access.VIEWER,
    f"POST {W}/event-types": Access.MEMBER,
    f"PATCH {W}/event-types/{{event_type_id}}": Access.MEMBER,
    f"DELETE {W}/event-types/{{event_type_id}}": Access.MEMBER,
    f"GET {W}/conversions": Access.VIEWER,
    f"GET {W}/reports": Access.VIEWER,
    f"GET {W}/reports/csv": Access.VIEWER,
    f"GET {W}/rates": Access.VIEWER,
    f"PUT {W}/rates": Access.MEMBER,
    f"DELETE {W}/rates/{{rate_id}}": Access.MEMBER,
    # Report columns are the caller's own choice, whatever their role.
    f"GET {W}/reports/columns": Access.VIEWER,
    f"PUT {W}/reports/columns": Access.VIEWER,
    f"GET {W}/orphans": Access.VIEWER,
    f"GET {W}/conversions/{{conversion_id}}": Access.VIEWER,
    f"POST {W}/conversions/{{conversion_id}}/attach": Access.MEMBER,
    f"DELETE {W}/conversions/{{conversion_id}}": Access.MEMBER,
    f"POST {W}/buyers/forget": Access.OWNER,
    f"GET {W}/postbacks": Access.VIEWER,
    f"GET {W}/postbacks/{{postback_id}}": Access.VIEWER,
    f"POST {W}/postbacks/replay": Access.MEMBER,
    f"GET {W}/merchants/{{merchant_id}}/export-columns": Access.VIEWER,
    f"PUT {W}/merchants/{{merchant_id}}/export-columns": Access.MEMBER,
    f"GET {W}/reconciliations": Access.VIEWER,
    f"POST {W}/reconciliations": Access.MEMBER,
    f"GET {W}/reconciliations/{{reconciliation_id}}": Access.VIEWER,
    f"GET {W}/reconciliations/{{reconciliation_id}}/csv": Access.VIEWER,
    f"GET {W}/campaigns/{{campaign_id}}/costs/model": Access.VIEWER,
    f"PUT {W}/campaigns/{{campaign_id}}/costs/model": Access.MEMBER,
    f"GET {W}/campaigns/{{campaign_id}}/costs/days": Access.VIEWER,
    f"PUT {W}/campaigns/{{campaign_id}}/costs/days/{{day}}": Access.MEMBER,
    f"DELETE {W}/campaigns/{{campaign_id}}/costs/days/{{day}}": Access.MEMBER,
    f"POST {W}/campaigns/{{campaign_id}}/costs/days/import": Access.MEMBER,
    "GET /api/v1/destination-templates": Access.SIGNED_IN,
    f"GET {W}/destinations": Access.VIEWER,
    f"POST {W}/destinations": Access.MEMBER,
    f"GET {W}/destinations/{{destination_id}}": Access.VIEWER,
    f"PUT {W}/destinations/{{destination_id}}": Access.MEMBER,
    f"DELETE {W}/destinations/{{destination_id}}": Access.MEMBER,
    f"POST {W}/destinations/{{destination_id}}/activate": Access.MEMBER,
    f"POST {W}/destinations/{{destination_id}}/deactivate": Access.MEMBER,
    f"POST {W}/destinations/{{destination_id}}/test": Access.MEMBER,
    f"POST {W}/destinations/{{destination_id}}/resend": Access.MEMBER,
    f"POST {W}/destinations/{{destination_id}}/rotate-secret": Access.MEMBER,
    f"GET {W}/deliveries": Access.VIEWER,
    f"GET {W}/deliveries/{{delivery_id}}": Access.VIEWER,
    f"POST {W}/deliveries/{{delivery_id}}/retry": Access.MEMBER,
    f"GET {W}/notices": Access.VIEWER,
    f"POST {W}/notices/{{notice_id}}/read": Access.MEMBER,
}

# A valid body for each API route that takes one, so that what answers is the access check and
# not the body's validation. "$name" stands for the id of a row (see Estate.ids).
API_BODIES: dict[str, dict[str, Any]] = {
    f"PUT {W}/reports/columns": {"columns": ["clicks", "sales"]},
    f"PUT {W}/rates": {"currency": "ARS", "day": "2026-12-01", "rate": "0.0055"},
    "PATCH /api/v1/me": {"name": "Ana"},
    "POST /api/v1/api-keys": {"name": "laptop"},
    "POST /api/v1/workspaces": {"name": "Another"},
    f"PATCH {W}": {"name": "Renamed"},
    f"POST {W}/members": {"email": "nobody@example.com", "role": "viewer"},
    f"PATCH {W}/members/{{user_id}}": {"role": "viewer"},
    f"POST {W}/invitations": {"email": "someone@example.com", "role": "viewer"},
    f"POST {W}/domains": {"host": "new.example.net"},
    f"PATCH {W}/domains/{{domain_id}}": {"fallback_url": "https://example.com/"},
    f"POST {W}/sources": {"name": "Newsletter"},
    f"PATCH {W}/sources/{{source_id}}": {"name": "Renamed"},
    f"POST {W}/campaigns": {
        "name": "New",
        "slug": "brand-new",
        "offer_url": "https://pay.example.com/?c={click_id}",
    },
    f"PATCH {W}/campaigns/{{campaign_id}}": {"name": "Renamed"},
    f"POST {W}/macros/preview": {"template": "https://pay.example.com/?c={click_id}"},
    f"POST {W}/merchants": {"key": "new-shop", "name": "New shop", "preset": "generic"},
    f"PATCH {W}/merchants/{{merchant_id}}": {"name": "Renamed"},
    f"POST {W}/merchants/{{merchant_id}}/test": {
        "event_type": "SALE",
        "status": "approved",
        "value": "1.00",
    },
    f"POST {W}/event-types": {"name": "NEW_KIND"},
    f"PATCH {W}/event-types/{{event_type_id}}": {"counts_as_revenue": True},
    f"POST {W}/conversions/{{conversion_id}}/attach": {"click_id": "$click_id"},
    f"POST {W}/postbacks/replay": {"ids": ["$postback_id"]},
    f"PUT {W}/merchants/{{merchant_id}}/export-columns": {
        "txid": "Pedido",
        "status": "Situação",
        "value": "Total",
        "sold_at": "Data",
    },
    f"POST {W}/buyers/forget": {"email": "ana@example.com"},
    f"PUT {W}/campaigns/{{campaign_id}}/costs/model": {"model": "cpc", "amount": "0.05"},
    f"PUT {W}/campaigns/{{campaign_id}}/costs/days/{{day}}": {"cost": "10,00"},
    f"POST {W}/destinations": {
        "name": "New",
        "kind": "postback",
        "url": "https://tracker.example/pb?cid={sub1}",
    },
    f"PUT {W}/destinations/{{destination_id}}": {
        "name": "Changed",
        "kind": "postback",
        "url": "https://tracker.example/pb?cid={sub1}",
    },
    f"POST {W}/destinations/{{destination_id}}/resend": {
        "since": "2026-01-01T00:00:00Z",
        "until": "2030-01-01T00:00:00Z",
    },
}

D = "/w/{workspace_id}"
DASHBOARD: dict[str, Access] = {
    "GET /login": Access.PUBLIC,
    "POST /login": Access.PUBLIC,
    "GET /setup/{token}": Access.PUBLIC,
    "POST /setup/{token}": Access.PUBLIC,
    "GET /invite/{token}": Access.PUBLIC,
    "POST /invite/{token}": Access.PUBLIC,
    "POST /language": Access.PUBLIC,
    "POST /logout": Access.SIGNED_IN,
    "GET /": Access.SIGNED_IN,
    "GET /workspaces/new": Access.SIGNED_IN,
    "POST /workspaces": Access.SIGNED_IN,
    f"GET {D}": Access.VIEWER,
    f"GET {D}/reports": Access.VIEWER,
    f"GET {D}/reports/csv": Access.VIEWER,
    f"GET {D}/reports/rows": Access.VIEWER,
    f"POST {D}/reports/columns": Access.VIEWER,
    f"POST {D}/rates": Access.MEMBER,
    f"POST {D}/rates/{{rate_id}}/delete": Access.MEMBER,
    f"GET {D}/campaigns": Access.VIEWER,
    f"GET {D}/campaigns/new": Access.MEMBER,
    f"POST {D}/campaigns/preview": Access.VIEWER,
    f"POST {D}/campaigns": Access.MEMBER,
    f"GET {D}/campaigns/{{campaign_id}}": Access.VIEWER,
    f"POST {D}/campaigns/{{campaign_id}}": Access.MEMBER,
    f"POST {D}/campaigns/{{campaign_id}}/status": Access.MEMBER,
    f"GET {D}/campaigns/{{campaign_id}}/costs": Access.VIEWER,
    f"POST {D}/campaigns/{{campaign_id}}/costs/model": Access.MEMBER,
    f"POST {D}/campaigns/{{campaign_id}}/costs/days": Access.MEMBER,
    f"POST {D}/campaigns/{{campaign_id}}/costs/days/delete": Access.MEMBER,
    f"POST {D}/campaigns/{{campaign_id}}/costs/import": Access.MEMBER,
    f"GET {D}/sources": Access.VIEWER,
    f"GET {D}/sources/new": Access.MEMBER,
    f"GET {D}/sources/mapping-row": Access.VIEWER,
    f"POST {D}/sources": Access.MEMBER,
    f"GET {D}/sources/{{source_id}}": Access.VIEWER,
    f"POST {D}/sources/{{source_id}}": Access.MEMBER,
    f"POST {D}/sources/{{source_id}}/delete": Access.MEMBER,
    f"GET {D}/merchants": Access.VIEWER,
    f"GET {D}/merchants/new": Access.MEMBER,
    f"GET {D}/merchants/rule-row": Access.VIEWER,
    f"POST {D}/merchants": Access.MEMBER,
    f"GET {D}/merchants/{{merchant_id}}": Access.VIEWER,
    f"POST {D}/merchants/{{merchant_id}}": Access.MEMBER,
    f"POST {D}/merchants/{{merchant_id}}/delete": Access.MEMBER,
    f"POST {D}/merchants/{{merchant_id}}/test": Access.MEMBER,
    f"GET {D}/clicks": Access.VIEWER,
    f"GET {D}/clicks/{{click_id}}": Access.VIEWER,
    f"GET {D}/conversions": Access.VIEWER,
    f"GET {D}/conversions/{{conversion_id}}": Access.VIEWER,
    f"POST {D}/conversions/{{conversion_id}}/attach": Access.MEMBER,
    f"POST {D}/conversions/{{conversion_id}}/delete": Access.MEMBER,
    f"GET {D}/postbacks": Access.VIEWER,
    f"POST {D}/postbacks/replay": Access.MEMBER,
    f"GET {D}/postbacks/{{entry_id}}": Access.VIEWER,
    f"GET {D}/reconciliation": Access.VIEWER,
    f"POST {D}/reconciliation": Access.MEMBER,
    f"GET {D}/reconciliation/{{reconciliation_id}}": Access.VIEWER,
    f"GET {D}/reconciliation/{{reconciliation_id}}/csv": Access.VIEWER,
    f"GET {D}/domains": Access.VIEWER,
    f"POST {D}/domains": Access.MEMBER,
    f"POST {D}/domains/{{domain_id}}/delete": Access.MEMBER,
    f"POST {D}/domains/{{domain_id}}/verify": Access.MEMBER,
    f"GET {D}/settings": Access.VIEWER,
    f"POST {D}/settings": Access.OWNER,
    f"POST {D}/settings/postback-token": Access.OWNER,
    f"POST {D}/settings/privacy": Access.OWNER,
    f"POST {D}/settings/forget-buyer": Access.OWNER,
    f"GET {D}/event-types": Access.VIEWER,
    f"POST {D}/event-types": Access.MEMBER,
    f"POST {D}/event-types/{{event_type_id}}": Access.MEMBER,
    f"POST {D}/event-types/{{event_type_id}}/delete": Access.MEMBER,
    f"POST {D}/members": Access.OWNER,
    f"POST {D}/members/{{user_id}}/role": Access.OWNER,
    f"POST {D}/members/{{user_id}}/delete": Access.OWNER,
    f"POST {D}/invitations/{{invitation_id}}/delete": Access.OWNER,
    f"GET {D}/destinations": Access.VIEWER,
    f"GET {D}/destinations/new": Access.MEMBER,
    f"POST {D}/destinations": Access.MEMBER,
    f"GET {D}/destinations/{{destination_id}}": Access.VIEWER,
    f"POST {D}/destinations/{{destination_id}}": Access.MEMBER,
    f"POST {D}/destinations/{{destination_id}}/test": Access.MEMBER,
    f"POST {D}/destinations/{{destination_id}}/status": Access.MEMBER,
    f"POST {D}/destinations/{{destination_id}}/resend": Access.MEMBER,
    f"POST {D}/destinations/{{destination_id}}/rotate-secret": Access.MEMBER,
    f"POST {D}/destinations/{{destination_id}}/delete": Access.MEMBER,
    f"POST {D}/notices/{{notice_id}}/read": Access.MEMBER,
    f"GET {D}/deliveries": Access.VIEWER,
    f"GET {D}/deliveries/{{delivery_id}}": Access.VIEWER,
    f"POST {D}/deliveries/{{delivery_id}}/retry": Access.MEMBER,
    # API keys are the caller's own, whatever their role: the workspace only frames the page.
    f"POST {D}/api-keys": Access.VIEWER,
    f"POST {D}/api-keys/{{key_id}}/revoke": Access.VIEWER,
}

# Forms for the dashboard's changes, valid enough to reach the check of the rows they name.
DASHBOARD_FORMS: dict[str, dict[str, str | list[str]]] = {
    f"POST {D}/campaigns/{{campaign_id}}/status": {"status": "paused"},
    f"POST {D}/conversions/{{conversion_id}}/attach": {"click_id": "$click_id"},
    f"POST {D}/postbacks/replay": {"ids": ["$postback_id"]},
    f"POST {D}/members/{{user_id}}/role": {"role": "viewer"},
    f"POST {D}/settings/forget-buyer": {"buyer": "ana@example.com"},
    f"POST {D}/api-keys": {"name": "laptop"},
    f"POST {D}/reports/columns": {"column": ["clicks", "sales"]},
    f"POST {D}/rates": {"currency": "ARS", "day": "2026-12-01", "rate": "0.0055"},
    f"POST {D}/campaigns/{{campaign_id}}/costs/model": {"model": "cpc", "amount": "0,05"},
    f"POST {D}/campaigns/{{campaign_id}}/costs/days": {"day": "2026-12-01", "cost": "10"},
    f"POST {D}/campaigns/{{campaign_id}}/costs/days/delete": {"day": "2026-12-01"},
    f"POST {D}/destinations": {
        "name": "New",
        "kind": "postback",
        "url": "https://tracker.example/pb?cid={sub1}",
    },
    f"POST {D}/destinations/{{destination_id}}": {
        "name": "Changed",
        "kind": "postback",
        "url": "https://tracker.example/pb?cid={sub1}",
    },
    f"POST {D}/destinations/{{destination_id}}/status": {"action": "deactivate"},
    f"POST {D}/destinations/{{destination_id}}/resend": {
        "since": "2026-01-01",
        "until": "2030-01-01",
    },
}

# Routes whose body is a multipart form with a file: the file sent with their body (or form).
SALES_CSV = b"txid,status,value,date\nT1,approved,10.00,2026-12-01 10:00\n"
COSTS_CSV = b"day;cost\n2026-12-01;10,00\n"
UPLOADS: dict[str, tuple[str, bytes]] = {
    f"POST {W}/reconciliations": ("sales.csv", SALES_CSV),
    f"POST {D}/reconciliation": ("sales.csv", SALES_CSV),
    f"POST {W}/campaigns/{{campaign_id}}/costs/days/import": ("costs.csv", COSTS_CSV),
    f"POST {D}/campaigns/{{campaign_id}}/costs/import": ("costs.csv", COSTS_CSV),
}
API_BODIES[f"POST {W}/reconciliations"] = {"merchant_id": "$merchant_id"}
DASHBOARD_FORMS[f"POST {D}/reconciliation"] = {"merchant_id": "$merchant_id"}

PLACEHOLDER = re.compile(r"\{(\w+)\}")  # in a path
BODY_ID = re.compile(r"\$(\w+)")  # in a body, where {click_id} is a macro
UNKNOWN_ID = "00VcNoSuchRowAnywhere0"


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    access: Access
    is_api: bool

    @property
    def key(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def names(self) -> set[str]:
        """The ids the request names, in its path or its body."""
        return self.path_names | set(BODY_ID.findall(str(self.body)))

    @property
    def path_names(self) -> set[str]:
        return set(PLACEHOLDER.findall(self.path))

    @property
    def body(self) -> dict[str, Any] | None:
        return (API_BODIES if self.is_api else DASHBOARD_FORMS).get(self.key)


def make_route(key: str, access: Access, *, is_api: bool) -> Route:
    method, path = key.split(" ", 1)
    return Route(method, path, access, is_api)


ROUTES = [
    *(make_route(key, access, is_api=True) for key, access in API.items()),
    *(make_route(key, access, is_api=False) for key, access in DASHBOARD.items()),
]
IN_WORKSPACE = [route for route in ROUTES if "workspace_id" in route.names]


@dataclass(frozen=True, slots=True)
class Visitor:
    """A caller of both surfaces: an API key for the API, a session for the dashboard."""

    api: dict[str, str]
    dashboard: dict[str, str]


async def visitor(db: AsyncEngine, caller: Caller) -> Visitor:
    return Visitor(caller.headers, await dashboard_session(db, caller.user))


async def dashboard_session(db: AsyncEngine, user: User) -> dict[str, str]:
    async with db.begin() as conn:
        token = await start_session(conn, user, now=now())
        session = await find_session(conn, token, now=now())
    assert session is not None
    return {"cookie": f"{SESSION_COOKIE}={token}", CSRF_HEADER: session.csrf_token}


def fill(path: str, ids: dict[str, str]) -> str:
    return PLACEHOLDER.sub(lambda m: ids.get(m.group(1), m.group(0)), path)


def fill_body(template: Any, ids: dict[str, str]) -> Any:
    if isinstance(template, str):
        return BODY_ID.sub(lambda m: ids[m.group(1)], template)
    if isinstance(template, list):
        return [fill_body(item, ids) for item in template]
    if isinstance(template, dict):
        return {name: fill_body(value, ids) for name, value in template.items()}
    return template


async def call(
    client: httpx.AsyncClient, route: Route, ids: dict[str, str], who: Visitor | None
) -> httpx.Response:
    path = fill(route.path, ids)
    body = fill_body(route.body, ids)
    upload = UPLOADS.get(route.key)
    if upload is not None:
        headers = (who.api if route.is_api else who.dashboard) if who else {}
        files = {"file": upload}
        return await client.request(route.method, path, data=body, files=files, headers=headers)
    if route.is_api:
        headers = who.api if who else {}
        return await client.request(route.method, path, json=body, headers=headers)
    headers = who.dashboard if who else {}
    data = body if route.method == "POST" else None
    return await client.request(route.method, path, data=data or {}, headers=headers)


def answer(response: httpx.Response, *ids: str) -> tuple[int, str]:
    """Status and body, with the ids the request named blanked out (a page may echo its path)."""
    text = response.text
    for value in ids:
        text = text.replace(value, "<id>")
    return response.status_code, text


@dataclass(frozen=True, slots=True)
class World:
    """Workspace A and its rows; B's owner, a stranger to A; a viewer and a member of A."""

    a: Estate
    b: Estate
    stranger: Visitor
    viewer: Visitor
    member: Visitor


async def world(client: httpx.AsyncClient, db: AsyncEngine) -> World:
    a = await build_estate(client, db)
    b = await build_estate(client, db)
    viewer = await make_member(db, a.workspace, Role.VIEWER)
    return World(
        a,
        b,
        await visitor(db, b.owner),
        await visitor(db, viewer),
        await visitor(db, a.member),
    )


async def test_every_route_is_in_the_matrix(client: httpx.AsyncClient) -> None:
    document = (await client.get("/api/openapi.json")).json()
    served_api = {
        f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
    }
    pages = {
        f"{method} {route.path}"
        for section in SECTIONS
        for route in section.router.routes
        for method in getattr(route, "methods", None) or ()
    }

    assert served_api == set(API)
    assert pages == set(DASHBOARD)
    assert {key for key in API_BODIES if key not in API} == set()
    assert {key for key in DASHBOARD_FORMS if key not in DASHBOARD} == set()


async def test_an_anonymous_caller_gets_401_from_the_api_and_the_sign_in_page_elsewhere(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    a = await build_estate(client, db)
    wrong = []
    for route in ROUTES:
        if route.access is Access.PUBLIC:
            continue
        response = await call(client, route, a.ids, None)
        path = fill(route.path, a.ids)
        if route.is_api:
            expected = response.status_code == 401
        elif route.method == "GET":
            expected = response.status_code == 303 and response.headers["location"] == (
                f"/login?next={path}"
            )
        else:  # refused (a form without a session lacks the sign-in CSRF cookie) or sent to sign in
            expected = response.status_code == 403 or (
                response.status_code == 303 and response.headers["location"].startswith("/login")
            )
        if not expected:
            wrong.append((route.key, response.status_code))

    assert wrong == []


async def test_another_workspace_s_member_gets_404_as_for_rows_that_do_not_exist(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    w = await world(client, db)
    unknown = dict.fromkeys(w.a.ids, UNKNOWN_ID)
    leaks = []
    for route in ROUTES:
        foreign_ids = route.names - {"workspace_id"}
        if route.access is Access.PUBLIC or not route.names:
            continue
        # A row named in the path is not found; one named only in the body may be reported in
        # a 200 (a replay's result per id), but never differently from one that does not exist.
        variants = []
        if "workspace_id" in route.names:  # A's workspace, against one that does not exist
            variants.append((w.a.ids, unknown, True))
        if foreign_ids:  # the stranger's own workspace, naming A's rows or no rows at all
            own = w.b.ids["workspace_id"]
            in_path = bool(route.path_names & foreign_ids)
            variants.append(
                ({**w.a.ids, "workspace_id": own}, {**unknown, "workspace_id": own}, in_path)
            )
        for ids, missing, must_be_404 in variants:
            real = await call(client, route, ids, w.stranger)
            made_up = await call(client, route, missing, w.stranger)
            named = [ids[name] for name in route.names if name in ids] + [UNKNOWN_ID]
            is_hidden = real.status_code == 404 or not must_be_404
            if not is_hidden or answer(real, *named) != answer(made_up, *named):
                leaks.append((route.key, real.status_code, made_up.status_code))

    assert leaks == []


async def test_a_viewer_reads_everything_and_changes_nothing(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    w = await world(client, db)
    [own_key] = (await client.get("/api/v1/api-keys", headers=w.viewer.api)).json()
    ids = {**w.a.ids, "key_id": own_key["id"]}  # API keys are the viewer's own to revoke
    wrong = []
    for route in IN_WORKSPACE:
        response = await call(client, route, ids, w.viewer)
        if route.access is Access.VIEWER:
            allowed = response.status_code in (200, 201, 303)
        else:
            allowed = response.status_code != 403
        if allowed != (route.access is Access.VIEWER):
            wrong.append((route.key, response.status_code))

    assert wrong == []
    workspace = await client.get(fill(f"{W}", w.a.ids), headers=w.a.owner.headers)
    assert workspace.json()["name"] == w.a.workspace.name


async def test_a_member_cannot_do_what_needs_an_owner(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    w = await world(client, db)
    wrong = []
    for route in IN_WORKSPACE:
        if route.access is Access.OWNER:
            response = await call(client, route, w.a.ids, w.member)
            if response.status_code != 403:
                wrong.append((route.key, response.status_code))

    assert wrong == []
    members = await client.get(fill(f"{W}/members", w.a.ids), headers=w.a.owner.headers)
    assert {m["role"] for m in members.json() if m["user_id"] == w.a.ids["user_id"]} == {"member"}
