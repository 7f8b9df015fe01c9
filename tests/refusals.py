"""A database trigger that refuses some inserts: a real cause of a failing row (or statement)
that no bounding of values can prevent, on SQLite and PostgreSQL alike. The error is no
constraint violation (which some callers answer as a conflict) and quotes no value."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine


async def refuse_inserts(db: AsyncEngine, table: str, *, when: str = "TRUE") -> None:
    """From now on, an INSERT into ``table`` of a row for which ``when`` holds (a condition on
    ``NEW``) fails."""
    async with db.begin() as conn:
        if db.dialect.name == "sqlite":
            await conn.execute(
                text(
                    f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} WHEN {when} "
                    "BEGIN SELECT json('refused'); END"  # "malformed JSON"
                )
            )
            return
        await conn.execute(
            text(
                f"CREATE FUNCTION refuse_{table}() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused'; END $$"
            )
        )
        await conn.execute(
            text(
                f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} FOR EACH ROW "
                f"WHEN ({when}) EXECUTE FUNCTION refuse_{table}()"
            )
        )
