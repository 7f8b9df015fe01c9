"""The database settings: the pool each process keeps on PostgreSQL (and on the reports'
replica), bounded; SQLite's stays."""

from __future__ import annotations

from typing import cast

import pytest
from pydantic import ValidationError
from sqlalchemy.pool import QueuePool

from trilha.app import create_app
from trilha.settings import Settings


def pool_of(settings: Settings) -> QueuePool:
    return cast(QueuePool, create_app(settings).runtime.engine.sync_engine.pool)


def reports_pool_of(settings: Settings) -> QueuePool:
    engine = create_app(settings).runtime.reports_engine
    assert engine is not None
    return cast(QueuePool, engine.sync_engine.pool)


async def test_it_sizes_the_postgresql_pool_as_set(settings: Settings) -> None:
    sized = settings.model_copy(update={"database_pool_size": 3, "database_pool_overflow": 0})
    pool = pool_of(sized)

    if settings.database_url.startswith("postgresql"):
        assert (pool.size(), pool._max_overflow) == (3, 0)
        # The reports' replica gets a pool of its own, of the same size.
        replica = sized.model_copy(update={"reports_database_url": settings.database_url})
        replica_pool = reports_pool_of(replica)
        assert replica_pool is not pool_of(replica)
        assert (replica_pool.size(), replica_pool._max_overflow) == (3, 0)
    else:  # one writer and a few readers: SQLite's pool is not the settings'
        assert (pool.size(), pool._max_overflow) == (4, 4)


async def test_the_postgresql_pool_is_ten_and_ten_by_default(settings: Settings) -> None:
    pool = pool_of(settings)

    if settings.database_url.startswith("postgresql"):
        assert (pool.size(), pool._max_overflow) == (10, 10)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("database_pool_size", "0"),
        ("database_pool_size", "-1"),
        ("database_pool_size", "201"),
        ("database_pool_overflow", "-1"),
        ("database_pool_overflow", "100000"),
    ],
)
def test_it_refuses_a_pool_of_no_connections_or_of_absurdly_many(name: str, value: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(**{name: value}, _env_file=None)  # type: ignore[arg-type]

    assert refused.value.errors()[0]["loc"] == (name,)
    assert "greater than" in str(refused.value) or "less than" in str(refused.value)


def test_no_overflow_is_allowed() -> None:
    assert Settings(database_pool_overflow=0, _env_file=None).database_pool_overflow == 0
