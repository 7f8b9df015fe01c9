"""/workspaces/{id}/domains: custom tracking domains; members and owners change them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.dns_server import DnsServer
from tests.factories import fetch_all, fetch_clicks, make_campaign, make_domain, make_workspace
from tests.web.callers import Caller, make_member, make_owner
from trilha.app import create_app
from trilha.db.schema import conversions, domains
from trilha.settings import Settings
from trilha.workspaces import Role


def domains_url(workspace_id: str) -> str:
    return f"/api/v1/workspaces/{workspace_id}/domains"


async def test_it_adds_a_domain(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    member = await make_member(db, workspace, Role.MEMBER)

    response = await client.post(
        domains_url(workspace.id),
        json={"host": "Track.Example.com.", "fallback_url": "https://example.com/"},
        headers=member.headers,
    )

    assert response.status_code == 201
    body = response.json()
    assert (body["host"], body["fallback_url"], body["status"]) == (
        "track.example.com",
        "https://example.com/",
        "pending",
    )
    [row] = await fetch_all(db, domains, workspace_id=workspace.id)
    assert (row["id"], row["host"], row["status"]) == (body["id"], "track.example.com", "pending")
    assert body["dns_record"] == {
        "name": "_trilha.track.example.com",
        "type": "TXT",
        "value": row["verification_token"],
    }
    assert len(row["verification_token"]) >= 40


async def test_it_refuses_a_host_with_a_scheme(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    owner, workspace = await make_owner(db)

    response = await client.post(
        domains_url(workspace.id), json={"host": "https://track.example.com"}, headers=owner.headers
    )

    assert response.status_code == 422
    assert "without scheme or path" in response.json()["errors"]["host"]
    assert await fetch_all(db, domains) == []


async def test_it_lists_and_shows_domains_to_viewers(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    domain = await make_domain(db, workspace, "b.example.com")
    await make_domain(db, workspace, "a.example.com")
    viewer = await make_member(db, workspace, Role.VIEWER)

    listed = await client.get(domains_url(workspace.id), headers=viewer.headers)
    one = await client.get(f"{domains_url(workspace.id)}/{domain.id}", headers=viewer.headers)

    assert [d["host"] for d in listed.json()] == ["a.example.com", "b.example.com"]
    assert one.json()["host"] == "b.example.com"


async def test_it_changes_and_clears_the_fallback_url(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    domain = await make_domain(db, workspace, "go.example.com")
    url = f"{domains_url(workspace.id)}/{domain.id}"

    changed = await client.patch(
        url, json={"fallback_url": "https://x.example/"}, headers=owner.headers
    )
    [row_after_change] = await fetch_all(db, domains, id=domain.id)
    cleared = await client.patch(url, json={"fallback_url": None}, headers=owner.headers)

    assert changed.json()["fallback_url"] == "https://x.example/"
    assert row_after_change["fallback_url"] == "https://x.example/"
    assert cleared.json()["fallback_url"] is None
    [row] = await fetch_all(db, domains, id=domain.id)
    assert row["fallback_url"] is None


async def test_it_deletes_a_domain_no_campaign_uses(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    domain = await make_domain(db, workspace, "go.example.com")

    response = await client.delete(
        f"{domains_url(workspace.id)}/{domain.id}", headers=owner.headers
    )

    assert response.status_code == 204
    assert await fetch_all(db, domains) == []


async def test_it_keeps_a_domain_that_campaigns_use(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    domain = await make_domain(db, workspace, "go.example.com")
    await make_campaign(db, workspace, host="go.example.com")

    response = await client.delete(
        f"{domains_url(workspace.id)}/{domain.id}", headers=owner.headers
    )

    assert response.status_code == 409
    assert "1 campaign(s) still use this domain" in response.json()["detail"]
    assert len(await fetch_all(db, domains)) == 1


async def test_it_lets_viewers_only_read(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    domain = await make_domain(db, workspace, "go.example.com")
    viewer = await make_member(db, workspace, Role.VIEWER)
    url = domains_url(workspace.id)

    responses = [
        await client.post(url, json={"host": "new.example.com"}, headers=viewer.headers),
        await client.patch(
            f"{url}/{domain.id}",
            json={"fallback_url": "https://x.example/"},
            headers=viewer.headers,
        ),
        await client.delete(f"{url}/{domain.id}", headers=viewer.headers),
        await client.post(f"{url}/{domain.id}/verify", headers=viewer.headers),
    ]

    assert [r.status_code for r in responses] == [403] * 4
    [row] = await fetch_all(db, domains)
    assert (row["host"], row["fallback_url"]) == ("go.example.com", None)


async def test_it_answers_404_for_a_domain_of_another_workspace(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    theirs = await make_domain(db, await make_workspace(db), "theirs.example.com")
    url = f"{domains_url(workspace.id)}/{theirs.id}"

    shown = await client.get(url, headers=owner.headers)
    verified = await client.post(f"{url}/verify", headers=owner.headers)
    deleted = await client.delete(url, headers=owner.headers)

    assert [shown.status_code, verified.status_code, deleted.status_code] == [404, 404, 404]
    assert shown.json() == {"detail": "domain not found"}
    assert len(await fetch_all(db, domains, id=theirs.id)) == 1


PUBLIC_URL = "https://trilha.example.com"


@pytest.fixture
async def public_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The app on a real public host, with one more host the operator reserved."""
    chosen = settings.model_copy(
        update={"public_url": PUBLIC_URL, "reserved_hosts": ["pay.example.org"]}
    )
    application = create_app(chosen)
    application.runtime.start()
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url=PUBLIC_URL) as http:
        yield http
    await application.runtime.stop()


SERVER_OWN = "this is the address of this trilha server; it cannot be a custom domain"
AN_ADDRESS = "an IP address cannot be a custom domain; use a domain name"
LOCALHOST = "localhost names cannot be custom domains"


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("trilha.example.com", SERVER_OWN),
        ("TRILHA.Example.com.", SERVER_OWN),
        ("www.trilha.example.com", SERVER_OWN),
        ("pay.example.org", SERVER_OWN),
        ("localhost", LOCALHOST),
        ("foo.localhost", LOCALHOST),
        ("127.0.0.1", AN_ADDRESS),
        ("10.1.2.3", AN_ADDRESS),
        ("[::1]", AN_ADDRESS),
        ("::1", AN_ADDRESS),
        ("[2001:db8::1]", AN_ADDRESS),
    ],
)
async def test_it_never_takes_the_servers_own_host_localhost_or_an_ip_address(
    public_client: httpx.AsyncClient, db: AsyncEngine, host: str, reason: str
) -> None:
    owner, workspace = await make_owner(db)

    response = await public_client.post(
        domains_url(workspace.id), json={"host": host}, headers=owner.headers
    )

    assert response.status_code == 422
    assert response.json()["errors"] == {"host": reason}
    assert await fetch_all(db, domains) == []


async def test_the_servers_own_host_keeps_routing_its_default_links(
    public_client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    victim = await make_workspace(db)
    await make_campaign(db, victim, slug="offer", offer_url="https://victim.example.com/")
    attacker, workspace = await make_owner(db)

    added = await public_client.post(
        domains_url(workspace.id),
        json={"host": "trilha.example.com", "fallback_url": "https://evil.example.com/"},
        headers=attacker.headers,
    )
    click = await public_client.get("/r/offer")

    assert added.status_code == 422
    assert click.headers["location"] == "https://victim.example.com/"


async def add(client: httpx.AsyncClient, caller: Caller, workspace_id: str, host: str) -> Any:
    response = await client.post(
        domains_url(workspace_id), json={"host": host}, headers=caller.headers
    )
    assert response.status_code == 201, response.text
    return response.json()


async def verify(
    client: httpx.AsyncClient, caller: Caller, workspace_id: str, domain_id: str
) -> Any:
    response = await client.post(
        f"{domains_url(workspace_id)}/{domain_id}/verify", headers=caller.headers
    )
    assert response.status_code == 200, response.text
    return response.json()


async def campaign_on(
    client: httpx.AsyncClient, caller: Caller, workspace_id: str, host: str, slug: str
) -> httpx.Response:
    return await client.post(
        f"/api/v1/workspaces/{workspace_id}/campaigns",
        json={"name": slug, "slug": slug, "host": host, "offer_url": f"https://{slug}.example/"},
        headers=caller.headers,
    )


async def test_a_pending_domain_routes_no_click_and_no_postback(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    owner, workspace = await make_owner(db)
    await add(client, owner, workspace.id, "go.example.com")

    campaign = await campaign_on(client, owner, workspace.id, "go.example.com", "offer")
    click = await client.get("/r/offer", headers={"host": "go.example.com"})
    postback = await client.get(
        "/postback", params={"click_id": "c1", "txid": "T1"}, headers={"host": "go.example.com"}
    )

    assert campaign.status_code == 422
    assert campaign.json()["errors"] == {
        "host": "add this domain to the workspace and verify it first"
    }
    assert click.status_code == 404
    assert postback.status_code == 401
    assert await fetch_clicks(db) == []
    assert await fetch_all(db, conversions) == []


async def test_a_domain_whose_txt_record_holds_its_token_is_verified_and_routes(
    client: httpx.AsyncClient, db: AsyncEngine, dns_records: DnsServer
) -> None:
    owner, workspace = await make_owner(db)
    domain = await add(client, owner, workspace.id, "go.example.com")
    dns_records.publish("_trilha.go.example.com", "other=1", domain["dns_record"]["value"])

    answer = await verify(client, owner, workspace.id, domain["id"])
    campaign = await campaign_on(client, owner, workspace.id, "go.example.com", "offer")
    click = await client.get("/r/offer", headers={"host": "go.example.com"})
    [click_row] = await fetch_clicks(db)
    postback = await client.get(
        "/postback",
        params={"click_id": click_row["id"], "txid": "T1"},
        headers={"host": "go.example.com"},
    )

    assert (answer["result"], answer["reason"]) == ("verified", None)
    assert answer["domain"]["status"] == "verified"
    assert answer["domain"]["verified_at"] is not None
    assert answer["domain"]["checked_at"] is not None
    assert campaign.status_code == 201
    assert click.headers["location"] == "https://offer.example/"
    assert postback.status_code == 200
    [conversion] = await fetch_all(db, conversions)
    assert conversion["workspace_id"] == workspace.id


@pytest.mark.parametrize(
    ("published", "result", "reason"),
    [
        (None, "no_record", "there is no TXT record at '_trilha.go.example.com'"),
        (
            "someone-elses-token",
            "wrong_value",
            "the TXT record at '_trilha.go.example.com' does not hold this domain's token",
        ),
        (
            "SERVFAIL",
            "dns_error",
            "the DNS lookup of '_trilha.go.example.com' failed: 'no nameserver answered'",
        ),
    ],
)
async def test_a_domain_without_its_record_stays_pending_with_the_reason(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    dns_records: DnsServer,
    published: str | None,
    result: str,
    reason: str,
) -> None:
    owner, workspace = await make_owner(db)
    domain = await add(client, owner, workspace.id, "go.example.com")
    if published == "SERVFAIL":
        dns_records.failing.add("_trilha.go.example.com")
    elif published is not None:
        dns_records.publish("_trilha.go.example.com", published)

    answer = await verify(client, owner, workspace.id, domain["id"])
    shown = await client.get(f"{domains_url(workspace.id)}/{domain['id']}", headers=owner.headers)

    assert (answer["result"], answer["reason"]) == (result, reason)
    assert (shown.json()["status"], shown.json()["check_error"]) == ("pending", reason)
    assert shown.json()["checked_at"] is not None
    [row] = await fetch_all(db, domains)
    assert (row["status"], row["verified_at"]) == ("pending", None)


async def test_a_host_verified_elsewhere_is_added_as_pending_and_reveals_nothing(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    await make_domain(db, await make_workspace(db), "taken.example.com")
    owner, workspace = await make_owner(db)

    taken = await add(client, owner, workspace.id, "taken.example.com")
    free = await add(client, owner, workspace.id, "free.example.com")
    taken_again = await client.post(
        domains_url(workspace.id), json={"host": "taken.example.com"}, headers=owner.headers
    )
    free_again = await client.post(
        domains_url(workspace.id), json={"host": "free.example.com"}, headers=owner.headers
    )

    def shape(answer: dict[str, Any]) -> dict[str, Any]:
        ignored = {"id", "host", "created_at", "dns_record"}
        return {key: value for key, value in answer.items() if key not in ignored}

    assert (
        shape(taken)
        == shape(free)
        == {
            "fallback_url": None,
            "status": "pending",
            "verified_at": None,
            "checked_at": None,
            "check_error": None,
        }
    )
    assert taken_again.status_code == free_again.status_code == 409
    assert taken_again.json() == free_again.json()
    assert taken_again.json()["errors"] == {"host": "this domain is already in this workspace"}


async def test_the_workspace_that_proves_control_takes_the_domain_over(
    client: httpx.AsyncClient, db: AsyncEngine, dns_records: DnsServer
) -> None:
    first_owner, first = await make_owner(db)
    second_owner, second = await make_owner(db)
    first_domain = await add(client, first_owner, first.id, "go.example.com")
    dns_records.publish("_trilha.go.example.com", first_domain["dns_record"]["value"])
    await verify(client, first_owner, first.id, first_domain["id"])
    assert (await campaign_on(client, first_owner, first.id, "go.example.com", "a")).is_success

    second_domain = await add(client, second_owner, second.id, "go.example.com")
    dns_records.publish("_trilha.go.example.com", second_domain["dns_record"]["value"])
    answer = await verify(client, second_owner, second.id, second_domain["id"])
    assert (await campaign_on(client, second_owner, second.id, "go.example.com", "b")).is_success

    old_link = await client.get("/r/a", headers={"host": "go.example.com"})
    new_link = await client.get("/r/b", headers={"host": "go.example.com"})
    first_view = await client.get(
        f"{domains_url(first.id)}/{first_domain['id']}", headers=first_owner.headers
    )
    assert answer["domain"]["status"] == "verified"
    assert old_link.status_code == 404
    assert new_link.headers["location"] == "https://b.example/"
    assert first_view.json()["status"] == "pending"
    assert first_view.json()["check_error"] == (
        "another workspace proved control of this domain; verify it again"
    )
    [click] = await fetch_clicks(db)
    assert click["workspace_id"] == second.id


async def test_without_verification_a_domain_routes_at_once_but_the_rules_hold(
    settings: Settings, db: AsyncEngine
) -> None:
    chosen = settings.model_copy(update={"public_url": PUBLIC_URL, "domain_verification": False})
    application = create_app(chosen)
    application.runtime.start()
    transport = httpx.ASGITransport(app=application)
    owner, workspace = await make_owner(db)
    try:
        async with httpx.AsyncClient(transport=transport, base_url=PUBLIC_URL) as http:
            domain = await add(http, owner, workspace.id, "go.example.com")
            own_host = await http.post(
                domains_url(workspace.id),
                json={"host": "trilha.example.com"},
                headers=owner.headers,
            )
            campaign = await campaign_on(http, owner, workspace.id, "go.example.com", "offer")
            click = await http.get("/r/offer", headers={"host": "go.example.com"})
    finally:
        await application.runtime.stop()

    assert domain["status"] == "verified"
    assert own_host.status_code == 422
    assert campaign.status_code == 201
    assert click.headers["location"] == "https://offer.example/"


async def test_removing_a_pending_domain_counts_only_the_workspaces_own_campaigns(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    first = await make_workspace(db)
    await make_domain(db, first, "go.example.com")
    await make_campaign(db, first, host="go.example.com")
    owner, workspace = await make_owner(db)
    domain = await add(client, owner, workspace.id, "go.example.com")

    response = await client.delete(
        f"{domains_url(workspace.id)}/{domain['id']}", headers=owner.headers
    )

    assert response.status_code == 204
    [row] = await fetch_all(db, domains)
    assert (row["workspace_id"], row["status"]) == (first.id, "verified")
