"""Plain functions that put rows in place for a test, each in its own committed transaction."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import count
from typing import Any

from sqlalchemy import Table, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.accounts import User, create_api_key, create_user
from trilha.campaigns import Campaign, ParamMapping, TrafficSource, create_campaign, create_source
from trilha.custom_domains import Domain, DomainPolicy, add_domain
from trilha.db.schema import click_view, clicks
from trilha.ids import mint_click_id
from trilha.passwords import hash_password
from trilha.workspaces import Workspace, create_workspace

PASSWORD = "correct horse battery"
_serial = count(1)


def now() -> datetime:
    return datetime.now(UTC)


async def make_user(db: AsyncEngine, *, email: str | None = None, password: str = PASSWORD) -> User:
    password_hash = await hash_password(password)
    async with db.begin() as conn:
        return await create_user(
            conn,
            email=email or f"user{next(_serial)}@example.com",
            password_hash=password_hash,
            now=now(),
        )


async def make_workspace(db: AsyncEngine, *, owner: User | None = None, **fields: Any) -> Workspace:
    owner = owner or await make_user(db)
    fields.setdefault("name", f"Workspace {next(_serial)}")
    async with db.begin() as conn:
        return await create_workspace(conn, owner, now=now(), **fields)


async def make_source(
    db: AsyncEngine,
    workspace: Workspace,
    *,
    name: str | None = None,
    params: tuple[ParamMapping, ...] = (),
) -> TrafficSource:
    async with db.begin() as conn:
        return await create_source(
            conn, workspace, name=name or f"Source {next(_serial)}", params=params, now=now()
        )


async def make_campaign(db: AsyncEngine, workspace: Workspace, **fields: Any) -> Campaign:
    fields.setdefault("name", f"Campaign {next(_serial)}")
    fields.setdefault("slug", f"offer-{next(_serial)}")
    fields.setdefault("offer_url", "https://pay.example.com/checkout/abc?src={click_id}")
    async with db.begin() as conn:
        return await create_campaign(conn, workspace, now=now(), **fields)


async def make_domain(
    db: AsyncEngine, workspace: Workspace, host: str, *, verified: bool = True, **fields: Any
) -> Domain:
    """A custom domain, verified (as an install without verification adds them) unless told."""
    policy = DomainPolicy(reserved_hosts=frozenset(), needs_proof=not verified)
    async with db.begin() as conn:
        return await add_domain(conn, workspace, host=host, policy=policy, now=now(), **fields)


async def make_api_key(db: AsyncEngine, user: User) -> str:
    async with db.begin() as conn:
        _, secret = await create_api_key(conn, user, name="tests", now=now())
    return secret


async def fetch_clicks(db: AsyncEngine, **where: Any) -> list[dict[str, Any]]:
    """The clicks as trilha reads them (click_view: with their workspace and user agent)."""
    columns = click_view.selected_columns
    query = click_view.where(*(columns[name] == value for name, value in where.items()))
    async with db.connect() as conn:
        return [dict(row) for row in (await conn.execute(query)).mappings()]


async def move_click(db: AsyncEngine, click_id: str, at: datetime) -> str:
    """Make a click as if at ``at``: its time and its id, which begins with it; the new id."""
    moved = mint_click_id(at)
    async with db.begin() as conn:
        await conn.execute(
            update(clicks).where(clicks.c.id == click_id).values(id=moved, created_at=at)
        )
    return moved


async def fetch_all(db: AsyncEngine, table: Table, **where: Any) -> list[dict[str, Any]]:
    query = select(table).where(*(table.c[name] == value for name, value in where.items()))
    async with db.connect() as conn:
        return [dict(row) for row in (await conn.execute(query)).mappings()]
