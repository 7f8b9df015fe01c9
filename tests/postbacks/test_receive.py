"""/postback and /pb: every request ends in exactly one outcome, stored with its payload."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import fetch_all, fetch_clicks, make_campaign, make_workspace
from trilha.db.schema import (
    conversion_status_history,
    conversions,
    postback_log,
    unmatched_postbacks,
    unmatched_samples,
)
from trilha.workspaces import Workspace


async def click_on(client: httpx.AsyncClient, db: AsyncEngine, workspace: Workspace) -> str:
    campaign = await make_campaign(db, workspace)
    await client.get(f"/r/{campaign.slug}")
    rows = await fetch_clicks(db, campaign_id=campaign.id)
    return str(rows[-1]["id"])


async def test_it_records_a_sale_on_its_click(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)

    response = await client.get(
        "/pb",
        params={
            "token": workspace.postback_token,
            "click_id": click_id,
            "tipo": "venda",
            "payout": "97,00",
            "txid": "T1",
        },
    )

    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["event"]) == ("created", "SALE")
    [conversion] = await fetch_all(db, conversions)
    assert body["conversion_id"] == conversion["id"]
    assert (conversion["click_id"], conversion["value_minor"], conversion["currency"]) == (
        click_id,
        9700,
        "BRL",
    )
    assert (conversion["status"], conversion["txid"]) == ("approved", "T1")
    [entry] = await fetch_all(db, postback_log)
    assert (entry["outcome"], entry["conversion_id"]) == ("created", conversion["id"])
    assert workspace.postback_token not in entry["query"]
    [history] = await fetch_all(db, conversion_status_history)
    assert (history["from_status"], history["to_status"]) == (None, "approved")


async def test_a_repeated_postback_counts_once(client: httpx.AsyncClient, db: AsyncEngine) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    params = {"token": workspace.postback_token, "cid": click_id, "payout": "297", "txid": "T1"}

    first = await client.get("/postback", params=params)
    second = await client.get("/postback", params={**params, "payout": "197"})

    assert first.json()["status"] == "created"
    assert second.status_code == 200
    assert second.json()["status"] == "duplicate"
    [conversion] = await fetch_all(db, conversions)
    assert conversion["value_minor"] == 29700
    entries = sorted(await fetch_all(db, postback_log), key=lambda e: e["received_at"])
    assert entries[1]["details"]["stored_value"] == "297.00"
    assert entries[1]["details"]["received_value"] == "197.00"


@pytest.mark.parametrize("concurrency", [100])
async def test_concurrent_identical_postbacks_make_one_conversion(
    client: httpx.AsyncClient, db: AsyncEngine, concurrency: int
) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    params = {
        "token": workspace.postback_token,
        "click_id": click_id,
        "txid": "RACE",
        "payout": "10",
    }

    responses = await asyncio.gather(
        *(client.get("/pb", params=params) for _ in range(concurrency))
    )

    outcomes = sorted(r.json()["status"] for r in responses)
    assert outcomes == ["created"] + ["duplicate"] * (concurrency - 1)
    assert len(await fetch_all(db, conversions)) == 1
    assert len(await fetch_all(db, postback_log)) == concurrency


async def fail_log_entries_of_txid(db: AsyncEngine, txid: str) -> None:
    """A database fault that strikes one postback only, at its last write (the log entry),
    after its conversion and status history were inserted."""
    async with db.begin() as conn:
        if db.dialect.name == "postgresql":
            await conn.execute(
                text(
                    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                    f" IF NEW.txid = '{txid}' THEN RAISE EXCEPTION 'refused'; END IF;"
                    " RETURN NEW; END $$"
                )
            )
            await conn.execute(
                text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON postback_log"
                    " FOR EACH ROW EXECUTE FUNCTION refuse()"
                )
            )
        else:
            await conn.execute(
                text(
                    "CREATE TRIGGER refuse BEFORE INSERT ON postback_log"
                    f" WHEN NEW.txid = '{txid}' BEGIN SELECT RAISE(ABORT, 'refused'); END"
                )
            )


async def test_a_postback_that_cannot_be_stored_fails_alone(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    await fail_log_entries_of_txid(db, "BROKEN")
    txids = ["BROKEN", *(f"OK{n}" for n in range(9))]

    # Sent together, so that on SQLite they share group commits with the broken one.
    responses = await asyncio.gather(
        *(
            client.get(
                "/pb", params={"token": workspace.postback_token, "cid": click_id, "txid": txid}
            )
            for txid in txids
        )
    )

    answers = dict(zip(txids, responses, strict=True))
    assert answers["BROKEN"].status_code == 503
    assert answers["BROKEN"].json()["status"] == "error"
    assert {r.json()["status"] for txid, r in answers.items() if txid != "BROKEN"} == {"created"}
    stored = await fetch_all(db, conversions)
    assert sorted(c["txid"] for c in stored) == txids[1:]
    # The broken request was not stored at all (its 5xx tells the platform to send it again).
    assert sorted(e["txid"] for e in await fetch_all(db, postback_log)) == txids[1:]
    assert len(await fetch_all(db, conversion_status_history)) == 9


async def test_a_refund_after_approval_changes_the_status_and_keeps_history(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    base = {"token": workspace.postback_token, "click_id": click_id, "txid": "T9", "payout": "100"}

    answers = []
    for status in ("pending", "approved", "refunded", "approved"):
        response = await client.get("/pb", params={**base, "status": status})
        answers.append((response.json()["status"], response.json()["conversion_status"]))

    # The ignored change answers the status the conversion keeps, not the one it was sent.
    assert answers == [
        ("created", "pending"),
        ("status_changed", "approved"),
        ("status_changed", "refunded"),
        ("ignored", "refunded"),
    ]
    [conversion] = await fetch_all(db, conversions)
    assert conversion["status"] == "refunded"
    assert conversion["value_minor"] == 10000
    history = sorted(await fetch_all(db, conversion_status_history), key=lambda h: h["created_at"])
    assert [(h["from_status"], h["to_status"]) for h in history] == [
        (None, "pending"),
        ("pending", "approved"),
        ("approved", "refunded"),
    ]
    assert all(h["postback_id"] for h in history)


async def test_an_unknown_click_is_kept_as_an_orphan(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)

    response = await client.get(
        "/pb", params={"token": workspace.postback_token, "click_id": "NOSUCHCLICK", "txid": "T1"}
    )

    assert response.status_code == 200
    assert response.json()["status"] == "orphan"
    [conversion] = await fetch_all(db, conversions)
    assert (conversion["click_id"], conversion["raw_click_id"]) == (None, "NOSUCHCLICK")


async def test_it_names_every_mapping_problem_at_once_and_logs_what_it_read(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    params = {"tipo": "nonsense", "payout": "abc", "moeda": "usd", "status": "pago", "txid": "T7"}

    response = await client.get("/pb", params={"token": workspace.postback_token, **params})

    assert response.status_code == 400
    # The most fundamental first: without a click id nothing else matters.
    reason = response.json()["reason"]
    assert reason.startswith("no click id in the request (looked in: click_id, ")
    assert reason.endswith(
        "); unknown event type 'NONSENSE'; add it under event types; 'abc' is not an amount"
    )
    [entry] = await fetch_all(db, postback_log)
    assert (entry["txid"], entry["value"], entry["currency"]) == ("T7", "abc", "usd")
    assert (entry["details"]["platform_event"], entry["details"]["platform_status"]) == (
        "nonsense",
        "pago",
    )


@pytest.mark.parametrize(
    ("params", "status_code", "reason"),
    [
        ({"tipo": "venda"}, 400, "no click id"),
        ({"click_id": "{click_id}"}, 400, "unfilled macro"),
        ({"click_id": "[[subid]]"}, 400, "unfilled macro"),
        ({"click_id": "%click_id%"}, 400, "unfilled macro"),
        ({"click_id": "{{x}}"}, 400, "unfilled macro"),
        ({"click_id": "c", "payout": "abc"}, 400, "'abc' is not an amount"),
        ({"click_id": "c", "payout": "-5"}, 400, "negative amount"),
        ({"click_id": "c", "payout": "99999999999"}, 400, "larger than"),
        ({"click_id": "c", "moeda": "XYZ"}, 400, "unknown currency"),
        ({"click_id": "c", "status": "maybe"}, 400, "unknown status"),
        ({"click_id": "c", "tipo": "nonsense"}, 400, "unknown event type 'NONSENSE'"),
        ({"click_id": "c", "payout": "1.234"}, 400, "more than 2 decimal places"),
    ],
)
async def test_it_answers_invalid_requests_with_a_precise_reason(
    client: httpx.AsyncClient,
    db: AsyncEngine,
    params: dict[str, str],
    status_code: int,
    reason: str,
) -> None:
    workspace = await make_workspace(db)
    params = {k: v for k, v in {"token": workspace.postback_token, **params}.items() if v}

    response = await client.get("/pb", params=params)

    assert response.status_code == status_code
    assert response.json()["status"] == "invalid"
    assert reason in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    [entry] = await fetch_all(db, postback_log)
    assert (entry["outcome"], entry["reason"]) == ("invalid", response.json()["reason"])


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"token": "wrong", "click_id": "x"}, "unknown token"),
        ({"token": "", "click_id": "x"}, "no workspace token"),
        ({"token": "{token}", "click_id": "{click_id}"}, "unknown token"),
    ],
)
async def test_it_answers_a_request_of_no_workspace_401_and_only_counts_it(
    client: httpx.AsyncClient, db: AsyncEngine, params: dict[str, str], reason: str
) -> None:
    await make_workspace(db)

    response = await client.get("/pb", params=params)

    assert response.status_code == 401
    assert response.json()["status"] == "invalid"
    assert reason in response.json()["reason"]
    assert await fetch_all(db, postback_log) == []
    [counted] = await fetch_all(db, unmatched_postbacks)
    assert counted["requests"] == 1


async def test_a_wrong_token_never_echoes_the_token(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    await make_workspace(db)

    response = await client.get("/pb", params={"token": "secret-guess-123", "click_id": "c"})

    assert "secret-guess-123" not in response.text
    [sample] = await fetch_all(db, unmatched_samples)
    assert "secret-guess-123" not in json.dumps(sample, default=str)


@pytest.mark.parametrize(
    ("content", "content_type", "reason"),
    [
        (b"\xff\xfe\x00garbage", "application/x-www-form-urlencoded", "not valid UTF-8"),
        (b'{"click_id": ', "application/json", "malformed JSON"),
        (b"[" * 5000 + b"]" * 5000, "application/json", "nested"),
        (b'"just a string"', "application/json", "not an object"),
        (
            "&".join(f"f{n}=1" for n in range(3000)).encode(),
            "application/x-www-form-urlencoded",
            "more than 1000 fields",
        ),
        (b"click_id=a&click_id=b", "application/x-www-form-urlencoded", "more than once"),
        (b'{"click_id": "a", "click_id": "b"}', "application/json", "more than once"),
        (b'{"click_id": "\\ud800"}', "application/json", "lone UTF-16 surrogate"),
        (b'{"x": [{"\\udfff": "1"}]}', "application/json", "lone UTF-16 surrogate"),
        (
            b'--b\r\nContent-Disposition: form-data; name="click_id"\r\n\r\n+2AA-\r\n--b--\r\n',
            "multipart/form-data; boundary=b; charset=utf-7",
            "lone UTF-16 surrogate",
        ),
        (
            b'--b\r\nContent-Disposition: form-data; name="click_id"\r\n\r\nabc\r\n--b--\r\n',
            "multipart/form-data; boundary=b; charset=undefined",
            "malformed multipart body",
        ),
        (b"<xml/>", "application/xml", "unsupported content type"),
    ],
)
async def test_it_rejects_unreadable_bodies_without_a_500(
    client: httpx.AsyncClient, db: AsyncEngine, content: bytes, content_type: str, reason: str
) -> None:
    workspace = await make_workspace(db)

    response = await client.post(
        "/pb",
        params={"token": workspace.postback_token},
        content=content,
        headers={"content-type": content_type},
    )

    assert response.status_code == 400
    assert reason in response.json()["reason"]
    assert await fetch_all(db, conversions) == []
    assert len(await fetch_all(db, postback_log)) == 1


async def test_it_refuses_a_body_over_the_limit_while_reading_it(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(300):
            yield b"x" * 1024

    response = await client.post(
        "/pb", params={"token": workspace.postback_token}, content=chunks()
    )

    assert response.status_code == 413
    [entry] = await fetch_all(db, postback_log)
    assert entry["outcome"] == "invalid"
    assert entry["body_truncated"] is True


async def test_it_reads_json_form_and_multipart_bodies_alike(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    token = {"token": workspace.postback_token}

    as_json = await client.post(
        "/pb", params=token, json={"click_id": click_id, "txid": "J1", "amount": 19.9}
    )
    as_form = await client.post(
        "/pb", params=token, data={"clickid": click_id, "transaction_id": "F1", "valor": "1.234,56"}
    )
    as_multipart = await client.post(
        "/pb",
        params=token,
        files={"x": ("", b"")},
        data={"subid": click_id, "order_id": "M1", "revenue": "5"},
    )

    assert [r.json()["status"] for r in (as_json, as_form, as_multipart)] == ["created"] * 3
    values = {c["txid"]: c["value_minor"] for c in await fetch_all(db, conversions)}
    assert values == {"J1": 1990, "F1": 123456, "M1": 500}


async def test_it_identifies_the_workspace_by_its_custom_domain(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    from tests.factories import make_domain

    workspace = await make_workspace(db)
    await make_domain(db, workspace, "track.loja.example")
    click_id = await click_on(client, db, workspace)

    response = await client.get(
        "/postback",
        params={"click_id": click_id, "txid": "D1"},
        headers={"host": "track.loja.example"},
    )

    assert response.json()["status"] == "created"
    [conversion] = await fetch_all(db, conversions)
    assert conversion["workspace_id"] == workspace.id


async def test_a_later_deposit_never_becomes_the_first(
    client: httpx.AsyncClient, db: AsyncEngine
) -> None:
    workspace = await make_workspace(db)
    click_id = await click_on(client, db, workspace)
    base = {"token": workspace.postback_token, "click_id": click_id}

    first = await client.get("/pb", params={**base, "tipo": "ftd", "payout": "50", "txid": "D1"})
    again = await client.get("/pb", params={**base, "tipo": "ftd", "payout": "80", "txid": "D2"})
    deposit = await client.get(
        "/pb", params={**base, "tipo": "deposit", "payout": "80", "txid": "D2"}
    )

    assert [r.json()["status"] for r in (first, again, deposit)] == [
        "created",
        "duplicate",
        "created",
    ]
    types = sorted(c["event_type"] for c in await fetch_all(db, conversions))
    assert types == ["DEPOSIT", "FTD"]
