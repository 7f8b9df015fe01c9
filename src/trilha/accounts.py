"""Users, their passwords, dashboard sessions, API keys and the first-start setup link."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from trilha.db.schema import api_keys, sessions, setup_tokens, users
from trilha.errors import Conflict, NotFound
from trilha.ids import hash_secret, new_id, new_secret
from trilha.login_limits import LoginLimits, count_attempt, give_back
from trilha.passwords import PasswordHash, check_password
from trilha.validation import NAME_MAX, require_email, require_text

SESSION_LIFETIME = timedelta(days=14)
API_KEY_PREFIX = "trk_"
LOCALES = ("pt-BR", "en")
# An API key's last use is recorded at most this often: a request that only reads then rarely
# needs a write of its own.
KEY_USE_PRECISION = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class User:
    id: str
    email: str
    name: str
    locale: str


@dataclass(frozen=True, slots=True)
class Session:
    user: User
    csrf_token: str


@dataclass(frozen=True, slots=True)
class NewSession:
    user: User
    token: str  # for the cookie; only its hash is stored


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """The user an API key acts as, and when the key was last used."""

    user: User
    key_id: str
    last_used_at: datetime | None

    def is_use_due(self, now: datetime) -> bool:
        """Whether this use should be recorded (see KEY_USE_PRECISION)."""
        return self.last_used_at is None or now - self.last_used_at >= KEY_USE_PRECISION


def _user(row: object) -> User:
    return User(id=row.id, email=row.email, name=row.name, locale=row.locale)  # type: ignore[attr-defined]


async def count_users(conn: AsyncConnection) -> int:
    return int((await conn.execute(select(func.count()).select_from(users))).scalar_one())


async def create_user(
    conn: AsyncConnection,
    *,
    email: str,
    password_hash: PasswordHash,
    name: str = "",
    locale: str = "pt-BR",
    now: datetime,
) -> User:
    """A new user; the password is hashed beforehand (trilha.passwords.hash_password), outside
    the transaction, as hashing takes a while."""
    email = require_email(email)
    user = User(id=new_id(), email=email, name=name.strip()[:NAME_MAX], locale=_locale(locale))
    try:
        async with conn.begin_nested():
            await conn.execute(
                users.insert().values(
                    id=user.id,
                    email=email,
                    name=user.name,
                    locale=user.locale,
                    password_hash=password_hash,
                    created_at=now,
                )
            )
    except IntegrityError:
        raise Conflict("a user with this e-mail already exists", field="email") from None
    return user


async def get_user(conn: AsyncConnection, user_id: str) -> User:
    row = (await conn.execute(select(users).where(users.c.id == user_id))).first()
    if row is None:
        raise NotFound("user not found")
    return _user(row)


async def find_user_by_email(conn: AsyncConnection, email: str) -> User | None:
    row = (await conn.execute(select(users).where(users.c.email == email.strip().lower()))).first()
    return None if row is None else _user(row)


async def update_user(
    conn: AsyncConnection, user: User, *, name: str | None = None, locale: str | None = None
) -> User:
    values = {}
    if name is not None:
        values["name"] = name.strip()[:NAME_MAX]
    if locale is not None:
        values["locale"] = _locale(locale)
    if values:
        await conn.execute(update(users).where(users.c.id == user.id).values(**values))
    return await get_user(conn, user.id)


async def sign_in(
    engine: AsyncEngine,
    limits: LoginLimits,
    *,
    email: str,
    password: str,
    client_ip: str,
    now: datetime,
) -> NewSession | None:
    """Check an e-mail and password and start a session; None when they do not match.

    Raises TooManyRequests, before any password is checked, when the e-mail or the address has
    used its limit (trilha.login_limits). It takes three steps and holds no connection while the
    password is checked (a while, in a thread; on SQLite any transaction holds the one write
    lock): count the attempt and read the user's hash in one short transaction, check, then give
    the attempt back and start the session in another.
    """
    async with engine.begin() as conn:
        attempt = await count_attempt(conn, limits, email=email, ip=client_ip, now=now)
        row = (
            await conn.execute(select(users).where(users.c.email == email.strip().lower()))
        ).first()
    is_match = await check_password(row.password_hash if row else None, password)
    if row is None or not is_match:
        return None
    user = _user(row)
    async with engine.begin() as conn:
        await give_back(conn, attempt)
        return NewSession(user, await start_session(conn, user, now=now))


async def start_session(conn: AsyncConnection, user: User, *, now: datetime) -> str:
    """A new session; returns the token for the cookie (only its hash is stored)."""
    token = new_secret()
    await conn.execute(
        sessions.insert().values(
            token_hash=hash_secret(token),
            user_id=user.id,
            csrf_token=new_secret(),
            created_at=now,
            expires_at=now + SESSION_LIFETIME,
        )
    )
    return token


async def find_session(conn: AsyncConnection, token: str, *, now: datetime) -> Session | None:
    row = (
        await conn.execute(
            select(users, sessions.c.csrf_token)
            .join(sessions, sessions.c.user_id == users.c.id)
            .where(sessions.c.token_hash == hash_secret(token), sessions.c.expires_at > now)
        )
    ).first()
    return None if row is None else Session(user=_user(row), csrf_token=row.csrf_token)


async def end_session(conn: AsyncConnection, token: str) -> None:
    await conn.execute(sessions.delete().where(sessions.c.token_hash == hash_secret(token)))


async def create_api_key(
    conn: AsyncConnection, user: User, *, name: str, now: datetime
) -> tuple[ApiKey, str]:
    """A new key for ``user``; the secret is returned once and stored only as a hash."""
    secret = new_secret(API_KEY_PREFIX)
    key = ApiKey(
        id=new_id(),
        name=require_text(name, "name", max_length=NAME_MAX),
        prefix=secret[:10],
        created_at=now,
        last_used_at=None,
        revoked_at=None,
    )
    await conn.execute(
        api_keys.insert().values(
            id=key.id,
            user_id=user.id,
            name=key.name,
            prefix=key.prefix,
            key_hash=hash_secret(secret),
            created_at=now,
        )
    )
    return key, secret


async def list_api_keys(conn: AsyncConnection, user: User) -> list[ApiKey]:
    rows = await conn.execute(
        select(api_keys).where(api_keys.c.user_id == user.id).order_by(api_keys.c.created_at)
    )
    return [
        ApiKey(
            id=r.id,
            name=r.name,
            prefix=r.prefix,
            created_at=r.created_at,
            last_used_at=r.last_used_at,
            revoked_at=r.revoked_at,
        )
        for r in rows
    ]


async def revoke_api_key(conn: AsyncConnection, user: User, key_id: str, *, now: datetime) -> None:
    result = await conn.execute(
        update(api_keys)
        .where(
            api_keys.c.id == key_id, api_keys.c.user_id == user.id, api_keys.c.revoked_at.is_(None)
        )
        .values(revoked_at=now)
    )
    if result.rowcount == 0:
        raise NotFound("API key not found")


async def find_api_key(conn: AsyncConnection, secret: str) -> KeyHolder | None:
    """The live key with this secret; only reads (see record_api_key_use)."""
    row = (
        await conn.execute(
            select(users, api_keys.c.id.label("key_id"), api_keys.c.last_used_at)
            .join(api_keys, api_keys.c.user_id == users.c.id)
            .where(api_keys.c.key_hash == hash_secret(secret), api_keys.c.revoked_at.is_(None))
        )
    ).first()
    if row is None:
        return None
    return KeyHolder(user=_user(row), key_id=row.key_id, last_used_at=row.last_used_at)


async def record_api_key_use(conn: AsyncConnection, key_id: str, *, now: datetime) -> None:
    await conn.execute(update(api_keys).where(api_keys.c.id == key_id).values(last_used_at=now))


async def create_setup_token(conn: AsyncConnection, *, now: datetime) -> str:
    token = new_secret()
    await conn.execute(setup_tokens.insert().values(token_hash=hash_secret(token), created_at=now))
    return token


async def use_setup_token(conn: AsyncConnection, token: str, *, now: datetime) -> bool:
    """Spend a setup token; False if it is unknown, used, or an account exists already.

    Spending one spends them all: each start on an empty database prints a new link, and none
    may create a second owner once the first exists. One conditional UPDATE does it and its row
    count decides, so of many uses at once only one wins: on PostgreSQL the others wait for its
    row locks and then find the rows spent; SQLite runs one writer at a time.
    """
    this_one = setup_tokens.alias("this_one")
    result = await conn.execute(
        update(setup_tokens)
        .where(
            setup_tokens.c.used_at.is_(None),
            select(this_one.c.token_hash)
            .where(this_one.c.token_hash == hash_secret(token), this_one.c.used_at.is_(None))
            .exists(),
            ~select(users.c.id).exists(),
        )
        .values(used_at=now)
    )
    return result.rowcount > 0


async def is_setup_token_valid(conn: AsyncConnection, token: str) -> bool:
    row = (
        await conn.execute(
            select(setup_tokens.c.used_at).where(setup_tokens.c.token_hash == hash_secret(token))
        )
    ).first()
    return row is not None and row.used_at is None and await count_users(conn) == 0


def _locale(value: str) -> str:
    return value if value in LOCALES else "pt-BR"
