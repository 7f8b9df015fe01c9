"""Migrations: they build exactly db/schema.py, and step down and up again, on both databases."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import bindparam, create_engine, inspect, text

from trilha.db.engine import sync_url
from trilha.db.migrate import alembic_config, migrate
from trilha.db.partitions import not_a_partition
from trilha.db.schema import Timestamp, click_view, clicks, metadata
from trilha.event_types import BUILTIN
from trilha.ids import mint_click_id
from trilha.visitors import agent_key, visitor_key


def schema_differences(url: str) -> list[object]:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return list(
                compare_metadata(
                    MigrationContext.configure(conn, opts={"include_object": not_a_partition}),
                    metadata,
                )
            )
    finally:
        engine.dispose()


def table_names(url: str) -> set[str]:
    engine = create_engine(sync_url(url))
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_the_migrations_build_exactly_the_declared_schema(database_url: str) -> None:
    assert schema_differences(database_url) == []
    assert set(metadata.tables) <= table_names(database_url)


def test_the_migrations_go_down_and_up_again(database_url: str) -> None:
    config = alembic_config(database_url)
    engine = create_engine(config.attributes["url"])
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "base")
    finally:
        engine.dispose()
    assert table_names(database_url) <= {"alembic_version"}

    migrate(database_url)

    assert schema_differences(database_url) == []


def test_migrating_twice_changes_nothing(database_url: str) -> None:
    migrate(database_url)
    assert schema_differences(database_url) == []


def test_workspaces_from_before_event_types_get_the_built_in_ones(database_url: str) -> None:
    url = database_url
    config = alembic_config(url)
    engine = create_engine(config.attributes["url"])
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0001")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO workspaces (id, name, timezone, currency, postback_token,"
                    " created_at) VALUES ('w1', 'Old', 'America/Sao_Paulo', 'BRL', 'tok',"
                    " CURRENT_TIMESTAMP)"
                )
            )
        migrate(url)
        with engine.connect() as conn:
            names = set(
                conn.execute(
                    text("SELECT name FROM event_types WHERE workspace_id = 'w1' AND is_builtin")
                ).scalars()
            )
    finally:
        engine.dispose()

    assert names == set(BUILTIN)


def test_domains_from_before_verification_stay_verified_with_a_token_each(
    database_url: str,
) -> None:
    config = alembic_config(database_url)
    engine = create_engine(config.attributes["url"])
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0003")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO workspaces (id, name, timezone, currency, postback_token,"
                    " created_at) VALUES ('w1', 'Old', 'America/Sao_Paulo', 'BRL', 'tok',"
                    " CURRENT_TIMESTAMP)"
                )
            )
            for domain_id, host in (("d1", "a.example.com"), ("d2", "b.example.com")):
                conn.execute(
                    text(
                        "INSERT INTO domains (id, workspace_id, host, created_at)"
                        " VALUES (:id, 'w1', :host, CURRENT_TIMESTAMP)"
                    ),
                    {"id": domain_id, "host": host},
                )
        migrate(database_url)
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT status, verification_token, verified_at, created_at, checked_at"
                    " FROM domains ORDER BY id"
                )
            ).all()
    finally:
        engine.dispose()

    assert [(row.status, row.checked_at) for row in rows] == [("verified", None)] * 2
    assert all(row.verified_at == row.created_at for row in rows)
    tokens = {row.verification_token for row in rows}
    assert len(tokens) == 2
    assert all(len(token) >= 40 for token in tokens)
    assert schema_differences(database_url) == []


def test_clicks_from_before_the_compact_visitor_key_are_keyed_again_and_kept(
    database_url: str,
) -> None:
    config = alembic_config(database_url)
    engine = create_engine(config.attributes["url"])
    agent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148"
    old_clicks = [
        ("c1", "k1", "200.147.67.142", agent),
        ("c2", "k1", "200.147.67.142", agent),
        ("c3", "k2", "2804:14c::1", "curl/8.5.0"),
    ]
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0006")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO workspaces (id, name, timezone, currency, postback_token,"
                    " created_at) VALUES ('w1', 'Old', 'America/Sao_Paulo', 'BRL', 'tok',"
                    " CURRENT_TIMESTAMP)"
                )
            )
            for campaign_id in ("k1", "k2"):
                conn.execute(
                    text(
                        "INSERT INTO campaigns (id, workspace_id, name, host, slug, offer_url,"
                        " status, created_at, updated_at) VALUES (:id, 'w1', :name, '', :slug,"
                        " 'https://offer.example.com/', 'active', CURRENT_TIMESTAMP,"
                        " CURRENT_TIMESTAMP)"
                    ),
                    {"id": campaign_id, "name": campaign_id, "slug": campaign_id},
                )
            for click_id, campaign_id, ip, user_agent in old_clicks:
                conn.execute(
                    text(
                        "INSERT INTO clicks (id, workspace_id, campaign_id, created_at, ip,"
                        " user_agent, visitor_key, device_type, os, browser, country, referrer,"
                        " is_bot, is_unique, sub1, params) VALUES (:id, 'w1', :campaign,"
                        " CURRENT_TIMESTAMP, :ip, :agent, :key, 'mobile', 'iOS', 'Safari', 'BR',"
                        " '', false, true, :sub1, '{}')"
                    ),
                    {
                        "id": click_id,
                        "sub1": click_id,
                        "campaign": campaign_id,
                        "ip": ip,
                        "agent": user_agent,
                        "key": hashlib.blake2b(
                            f"{ip}\n{user_agent}".encode(), digest_size=16
                        ).hexdigest(),
                    },
                )
            conn.execute(
                text(
                    "INSERT INTO conversions (id, workspace_id, click_id, raw_click_id,"
                    " campaign_id, event_type, status, value_minor, currency, dedupe_key,"
                    " created_at, status_changed_at) VALUES ('v1', 'w1', 'c2', 'c2', 'k1',"
                    " 'SALE', 'approved', 9700, 'BRL', 'tx:1', CURRENT_TIMESTAMP,"
                    " CURRENT_TIMESTAMP)"
                )
            )
        migrate(database_url)
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT id, campaign_id, visitor_key, sub1 FROM clicks ORDER BY id")
            ).all()
            converted_click = conn.execute(
                text("SELECT click_id FROM conversions WHERE id = 'v1'")
            ).scalar_one()
        differences = schema_differences(database_url)
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0006")
        with engine.connect() as conn:
            keys_after_downgrade = (
                conn.execute(text("SELECT visitor_key FROM clicks ORDER BY id")).scalars().all()
            )
    finally:
        engine.dispose()

    assert [(r.id, r.campaign_id, r.sub1) for r in rows] == [(c, k, c) for c, k, _, _ in old_clicks]
    assert [r.visitor_key for r in rows] == [
        visitor_key(campaign_id, ip, user_agent) for _, campaign_id, ip, user_agent in old_clicks
    ]
    assert converted_click == "c2"
    assert differences == []
    assert keys_after_downgrade == [
        hashlib.blake2b(f"{ip}\n{user_agent}".encode(), digest_size=16).hexdigest()
        for _, _, ip, user_agent in old_clicks
    ]


def test_clicks_from_before_the_hourly_sums_are_added_up_by_the_migration(
    database_url: str,
) -> None:
    config = alembic_config(database_url)
    engine = create_engine(config.attributes["url"])
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0006")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO workspaces (id, name, timezone, currency, postback_token,"
                    " created_at) VALUES ('w1', 'Old', 'America/Sao_Paulo', 'BRL', 'tok',"
                    " CURRENT_TIMESTAMP)"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO campaigns (id, workspace_id, name, slug, offer_url, created_at,"
                    " updated_at) VALUES ('c1', 'w1', 'C', 'c', 'https://o.example/',"
                    " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            for n, (at, sub1, is_bot) in enumerate(
                [
                    (datetime(2026, 3, 1, 10, 5, tzinfo=UTC), "a", False),
                    (datetime(2026, 3, 1, 10, 59, tzinfo=UTC), "a", True),
                    (datetime(2026, 3, 1, 11, 0, tzinfo=UTC), None, False),
                ]
            ):
                conn.execute(
                    text(
                        "INSERT INTO clicks (id, workspace_id, campaign_id, created_at, ip,"
                        " user_agent, visitor_key, device_type, os, browser, country, referrer,"
                        " is_bot, is_unique, sub1, params) VALUES (:id, 'w1', 'c1', :at,"
                        " '198.51.100.1', 'UA', :key, 'mobile', 'iOS', 'Safari', 'BR', '',"
                        " :is_bot, true, :sub1, '{}')"
                    ).bindparams(bindparam("at", type_=Timestamp)),
                    {"id": f"k{n}", "at": at, "key": f"v{n}", "is_bot": is_bot, "sub1": sub1},
                )
        migrate(database_url)
        with engine.connect() as conn:
            hours = conn.execute(
                text(
                    "SELECT hour, source_id, sub1, clicks, unique_clicks, bot_clicks"
                    " FROM click_sub1_hours ORDER BY hour"
                )
            ).all()
    finally:
        engine.dispose()

    ten = int(datetime(2026, 3, 1, 10, tzinfo=UTC).timestamp()) // 3600
    assert [tuple(row) for row in hours] == [(ten, "", "a", 2, 2, 1), (ten + 1, "", "", 1, 1, 0)]


def test_clicks_from_before_the_stored_agents_keep_their_agent_and_workspace(
    database_url: str,
) -> None:
    config = alembic_config(database_url)
    engine = create_engine(config.attributes["url"])
    phone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148"
    old_clicks = sorted(  # (id, campaign, user agent): two agents, one of them twice
        [
            (mint_click_id(), "k1", phone),
            (mint_click_id(), "k1", phone),
            (mint_click_id(), "k2", "curl/8.5.0"),
        ]
    )
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0024")
        with engine.begin() as conn:
            for workspace_id, campaign_id in (("w1", "k1"), ("w2", "k2")):
                conn.execute(
                    text(
                        "INSERT INTO workspaces (id, name, timezone, currency, postback_token,"
                        " created_at) VALUES (:id, :id, 'America/Sao_Paulo', 'BRL', :id,"
                        " CURRENT_TIMESTAMP)"
                    ),
                    {"id": workspace_id},
                )
                conn.execute(
                    text(
                        "INSERT INTO campaigns (id, workspace_id, name, host, slug, offer_url,"
                        " status, created_at, updated_at) VALUES (:id, :workspace, :id, '', :id,"
                        " 'https://offer.example.com/', 'active', CURRENT_TIMESTAMP,"
                        " CURRENT_TIMESTAMP)"
                    ),
                    {"id": campaign_id, "workspace": workspace_id},
                )
            for click_id, campaign_id, user_agent in old_clicks:
                conn.execute(
                    text(
                        "INSERT INTO clicks (id, workspace_id, campaign_id, created_at, ip,"
                        " user_agent, visitor_key, device_type, os, browser, country, referrer,"
                        " is_bot, is_unique, params) VALUES (:id, :workspace, :campaign,"
                        " CURRENT_TIMESTAMP, '203.0.113.9', :agent, 1, 'mobile', 'iOS', 'Safari',"
                        " 'BR', '', false, true, '{}')"
                    ),
                    {
                        "id": click_id,
                        "workspace": {"k1": "w1", "k2": "w2"}[campaign_id],
                        "campaign": campaign_id,
                        "agent": user_agent,
                    },
                )
        migrate(database_url)
        with engine.connect() as conn:
            agents = conn.execute(text("SELECT key, agent FROM user_agents"))
            stored: dict[int, str] = {row[0]: row[1] for row in agents}
            keys = list(
                conn.execute(text("SELECT user_agent_key FROM clicks ORDER BY id")).scalars()
            )
            read = conn.execute(click_view.order_by(clicks.c.id)).mappings().all()
        differences = schema_differences(database_url)
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.downgrade(config, "0024")
        with engine.connect() as conn:
            after_downgrade = conn.execute(
                text("SELECT id, workspace_id, user_agent FROM clicks ORDER BY id")
            ).all()
    finally:
        engine.dispose()

    assert stored == {agent_key(phone): phone, agent_key("curl/8.5.0"): "curl/8.5.0"}
    assert keys == [agent_key(agent) for _, _, agent in old_clicks]
    assert [(r["id"], r["workspace_id"], r["user_agent"]) for r in read] == [
        (click_id, {"k1": "w1", "k2": "w2"}[campaign_id], agent)
        for click_id, campaign_id, agent in old_clicks
    ]
    assert differences == []
    assert [tuple(row) for row in after_downgrade] == [
        (click_id, {"k1": "w1", "k2": "w2"}[campaign_id], agent)
        for click_id, campaign_id, agent in old_clicks
    ]
