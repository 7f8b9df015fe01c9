"""GET /internal/tls-allowed: which hosts the proxy in front may get a certificate for, answered
to that proxy alone; and the visitor's address that a proxy on the loopback passes on."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_clicks, make_campaign, make_domain, make_workspace
from tests.test_serve import trilha_serve
from trilha.app import create_app
from trilha.settings import Settings

ASK = "/internal/tls-allowed"
LONG = "a." * 500 + "example.com"  # past a domain name's 253 characters


async def test_it_allows_the_public_host_and_verified_domains_alone(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    first, second = await make_workspace(db), await make_workspace(db)
    await make_domain(db, first, "go.example.com")
    await make_domain(db, second, "go.example.org")
    await make_domain(db, second, "pending.example.com", verified=False)

    with trilha_serve(database_url, tmp_path, public_url="https://track.example.com") as (base, _):
        answers = {
            domain: httpx.get(base + ASK, params={"domain": domain}).status_code
            for domain in (
                "track.example.com",
                "go.example.com",
                "GO.Example.org.",
                "pending.example.com",
                "unknown.example.com",
                "www.track.example.com",
                "127.0.0.1",
                "*.example.com",
                "go.example.com:443",
                LONG,
                "",
            )
        }
        no_domain = httpx.get(base + ASK)

    assert answers == {
        "track.example.com": 200,
        "go.example.com": 200,
        "GO.Example.org.": 200,
        "pending.example.com": 404,
        "unknown.example.com": 404,
        "www.track.example.com": 404,
        "127.0.0.1": 404,
        "*.example.com": 404,
        "go.example.com:443": 404,
        LONG: 404,
        "": 404,
    }
    assert no_domain.status_code == 404


async def test_it_answers_no_request_a_proxy_forwarded(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    await make_domain(db, await make_workspace(db), "go.example.com")

    with trilha_serve(database_url, tmp_path) as (base, _):
        forwarded = httpx.get(
            base + ASK,
            params={"domain": "go.example.com"},
            headers={"x-forwarded-for": "203.0.113.9"},
        )
        standard = httpx.get(
            base + ASK, params={"domain": "go.example.com"}, headers={"forwarded": "for=1.2.3.4"}
        )

    assert forwarded.status_code == standard.status_code == 403
    assert forwarded.text == "only the proxy in front of trilha may ask\n"


@pytest.mark.parametrize(
    ("peer", "trusted", "status"),
    [
        ("198.51.100.23", None, 403),  # anyone else
        ("10.0.0.5", "10.0.0.0/8", 200),  # a trusted proxy on another machine
        ("10.0.0.5", "", 403),
        ("::1", "", 200),  # the loopback, always
    ],
)
async def test_it_answers_the_loopback_and_trusted_proxies_alone(
    settings: Settings, db: AsyncEngine, peer: str, trusted: str | None, status: int
) -> None:
    await make_domain(db, await make_workspace(db), "go.example.com")
    if trusted is not None:
        settings = settings.model_copy(
            update={"trusted_proxies": Settings(trusted_proxies=trusted).trusted_proxies}
        )
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app, client=(peer, 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.get(ASK, params={"domain": "go.example.com"})
    await app.runtime.stop()

    assert response.status_code == status


async def test_it_is_not_in_the_api_description(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/api/openapi.json")).json()["paths"]

    assert not [path for path in paths if path.startswith("/internal")]


async def test_a_proxy_on_the_loopback_passes_on_the_visitors_address_by_default(
    database_url: str, db: AsyncEngine, tmp_path: Path
) -> None:
    workspace = await make_workspace(db)
    await make_campaign(db, workspace, slug="lp")

    with trilha_serve(database_url, tmp_path) as (base, _):
        response = httpx.get(f"{base}/r/lp", headers={"x-forwarded-for": "200.147.67.142"})

    assert response.status_code == 302
    [click] = await fetch_clicks(db)
    assert (click["ip"], click["country"]) == ("200.147.67.142", "BR")
