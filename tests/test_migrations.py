"""Migrations: they build exactly db/schema.py, and step down and up again, on both databases."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from trilha.db.engine import sync_url
from trilha.db.migrate import alembic_config, migrate
from trilha.db.schema import metadata
from trilha.event_types import BUILTIN


def schema_differences(url: str) -> list[object]:
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            return list(compare_metadata(MigrationContext.configure(conn), metadata))
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


def test_workspaces_from_before_event_types_get_the_built_in_ones(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'old.db'}"
    migrate(url, "0001")
    engine = create_engine(sync_url(url))
    try:
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
