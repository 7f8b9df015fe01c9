"""schemathesis against the management API's OpenAPI document: whatever a client sends, valid or
not, the API never answers a 5xx, answers only the status codes its operation documents, and
every answer matches the schema and content type documented for its status.

Requests carry a real API key and name real rows (tests/web/estate.py), so that the fuzzing reaches
past authentication and the lookup of path ids. The app runs on an event loop of its own thread
while hypothesis drives the cases synchronously.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from tempfile import gettempdir
from typing import Any

import httpx
import pytest
import schemathesis
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.config import SchemathesisConfig
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.conftest import Template, fresh_database, settings_for
from tests.dns_server import DnsServer
from tests.web.estate import Estate, build_estate
from trilha.app import TrilhaApp, create_app
from trilha.db.engine import make_engine
from trilha.settings import Settings

# Cases per operation: 54 operations on each database keep this within about a minute.
EXAMPLES = {"ci": 20, "full": 500}[os.environ.get("TRILHA_HYPOTHESIS_PROFILE", "ci")]
# Without status_code_conformance the other two pass any undocumented status unread.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    response_schema_conformance,
    content_type_conformance,
]
# NUL characters are the HTTP edge's concern (refused there with a 400 of its own), not the
# schema's: leaving them out keeps this test about what the handlers answer. The coverage phase
# (every boundary of every field, hundreds of requests per operation) is left to the fuzzing's
# random search, which the full profile makes long.
CONFIG = SchemathesisConfig.from_str(
    f"""
[generation]
allow-x00 = false
with-security-parameters = false
max-examples = {EXAMPLES}

[phases.coverage]
enabled = false
"""
)


def served_document() -> dict[str, Any]:
    """The document /api/openapi.json serves (the app opens no database to build it)."""
    unused = Path(gettempdir()) / "trilha-openapi-never-opened.db"
    document: dict[str, Any] = create_app(
        Settings(database_url=f"sqlite+aiosqlite:///{unused}", _env_file=None)
    ).web.openapi()
    return document


schema = schemathesis.openapi.from_dict(served_document(), config=CONFIG)


@dataclass(frozen=True, slots=True)
class LiveApi:
    portal: BlockingPortal
    client: httpx.AsyncClient
    estate: Estate

    def send(self, case: schemathesis.Case[Any]) -> httpx.Response:
        case.path_parameters = {name: self.estate.ids[name] for name in case.path_parameters}
        sent = case.as_transport_kwargs(
            base_url="http://testserver", headers=self.estate.owner.headers
        )
        sent.pop("cookies")  # always empty: no operation takes a cookie parameter
        if isinstance(sent.get("data"), bytes | str):  # httpx sends raw bodies as content
            sent["content"] = sent.pop("data")
        if sent.get("files") is not None:
            sent["files"] = [(name, as_part(part)) for name, part in sent["files"]]
        request = self.client.build_request(**sent)
        request.read()  # a multipart body is a stream; the response's check reads it back
        response: httpx.Response = self.portal.call(lambda: self.client.send(request))
        return response


def as_part(part: tuple[Any, ...]) -> tuple[Any, ...]:
    """A multipart part as httpx sends it: schemathesis writes form fields as ``(None, value)``
    with values of any JSON type, where httpx takes text or bytes."""
    filename, value, *rest = part
    if not isinstance(value, str | bytes):
        value = json.dumps(value)
    return (filename, value, *rest)


async def start(config: Settings) -> tuple[TrilhaApp, httpx.AsyncClient, AsyncEngine]:
    app = create_app(config)
    app.runtime.start()
    transport = httpx.ASGITransport(app=app, client=("198.51.100.23", 50000))
    client = httpx.AsyncClient(transport=transport, base_url="http://testserver")
    return app, client, make_engine(config.database_url)


async def stop(app: TrilhaApp, client: httpx.AsyncClient, db: AsyncEngine) -> None:
    await client.aclose()
    await db.dispose()
    await app.runtime.stop()


@contextmanager
def running_api(database_url: str, dns_server: DnsServer) -> Iterator[LiveApi]:
    with start_blocking_portal() as portal:
        app, client, db = portal.call(start, settings_for(database_url, dns_server))
        try:
            yield LiveApi(portal, client, portal.call(build_estate, client, db))
        finally:
            portal.call(stop, app, client, db)


@pytest.fixture(scope="module")
def shared_api(
    tmp_path_factory: pytest.TempPathFactory, database_template: Template, dns_server: DnsServer
) -> Iterator[LiveApi]:
    """One database for every operation that deletes nothing: their cases add and change rows
    but leave the estate's ids in place, and one estate is far quicker than one each."""
    with (
        fresh_database(tmp_path_factory.mktemp("api"), database_template) as url,
        running_api(url, dns_server) as api,
    ):
        yield api


@pytest.fixture
def fresh_api(database_url: str, dns_server: DnsServer) -> Iterator[LiveApi]:
    with running_api(database_url, dns_server) as api:
        yield api


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)


async def test_it_fuzzes_the_document_the_app_serves(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/openapi.json")).json() == served_document()


@schema.exclude(method="DELETE").parametrize()
@FUZZ
def test_the_api_answers_any_request_without_a_5xx_and_as_documented(
    case: schemathesis.Case[Any], shared_api: LiveApi
) -> None:
    response = shared_api.send(case)

    case.validate_response(response, checks=CHECKS)


@schema.include(method="DELETE").parametrize()
@FUZZ
def test_the_api_answers_any_deletion_without_a_5xx_and_as_documented(
    case: schemathesis.Case[Any], fresh_api: LiveApi
) -> None:
    response = fresh_api.send(case)

    case.validate_response(response, checks=CHECKS)
