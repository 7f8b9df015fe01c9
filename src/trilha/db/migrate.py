"""Apply Alembic migrations: on `trilha migrate` and when `trilha serve` starts."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine

from trilha.db.engine import sync_url

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["url"] = sync_url(url)
    return config


def migrate(url: str, revision: str = "head") -> None:
    """Upgrade the database at ``url`` to ``revision``, creating the SQLite file if needed."""
    config = alembic_config(url)
    engine = create_engine(config.attributes["url"], hide_parameters=True)
    try:
        with engine.begin() as conn:
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
    finally:
        engine.dispose()
