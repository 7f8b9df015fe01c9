"""Merchants: a workspace's sales-platform accounts, each a preset plus the user's mapping."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from ipaddress import ip_address, ip_network
from typing import Any

from sqlalchemy import Connection, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from trilha.conversions.dedupe import DedupeMode
from trilha.conversions.status import Status
from trilha.db.schema import merchants
from trilha.errors import Conflict, InvalidInput, NotFound
from trilha.hold import require_hold_days
from trilha.ids import new_id
from trilha.money import ValueUnit
from trilha.postbacks.platforms import PRESETS
from trilha.postbacks.preset import FIELDS, IGNORE, AuthKind, Preset, Rule, SecretOrigin
from trilha.validation import NAME_MAX, require_text

KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
MAX_WINDOW = 7 * 24 * 60  # minutes: a week
RULE_STATUSES = (*(s.value for s in Status), IGNORE)
# A secret a person invents (a generic merchant's) shorter than this is refused when set; one a
# platform issues is taken as issued, and any secret shorter than this is warned about.
MIN_SECRET = 16
MAX_SECRET = 512


class MerchantWarning(StrEnum):
    """Something about a merchant that works but should be changed."""

    SHORT_SECRET = "short_secret"  # noqa: S105 -- a warning's name: fewer than MIN_SECRET


@dataclass(frozen=True, slots=True)
class Merchant:
    id: str | None
    key: str
    name: str
    preset: Preset
    field_paths: Mapping[str, str] = field(default_factory=dict)
    rules: tuple[Rule, ...] = ()
    value_choice: str = "gross"
    value_unit: ValueUnit | None = None
    ip_allowlist: tuple[str, ...] = ()
    secret: str | None = None
    dedupe_mode: DedupeMode = DedupeMode.TXID
    dedupe_window_minutes: int = 60
    # Each field's paths, joined once: a postback reads a dozen of them.
    _paths: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)
    # Where its requests carry a secret or a signature (right or wrong), for the log to mask:
    # fields by path, and headers by their lower-case name.
    secret_paths: tuple[str, ...] = field(init=False, repr=False, compare=False)
    secret_headers: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        joined = {}
        for name in {*self.preset.paths, *self.field_paths}:
            override = self.field_paths.get(name)
            joined[name] = ((override,) if override else ()) + tuple(
                self.preset.paths.get(name, ())
            )
        object.__setattr__(self, "_paths", joined)
        secret_paths = (*self.paths("secret"), *self.preset.secret_names, "signature")
        headers = {path.lower() for path in secret_paths}
        if self.preset.auth is AuthKind.HMAC_SHA256_HEADER:
            headers.add(self.preset.auth_param.lower())
        object.__setattr__(self, "secret_paths", secret_paths)
        object.__setattr__(self, "secret_headers", frozenset(headers))

    def paths(self, name: str) -> tuple[str, ...]:
        """The field's paths to try, in order: the user's own path first, then the preset's."""
        return self._paths.get(name, ())

    def allows_ip(self, ip: str) -> bool:
        if not self.ip_allowlist:
            return True
        try:
            address = ip_address(ip)
        except ValueError:
            return False
        return any(
            address.version == (net := ip_network(cidr, strict=False)).version and address in net
            for cidr in self.ip_allowlist
        )


GENERIC = Merchant(id=None, key="generic", name="Generic", preset=PRESETS["generic"])


@dataclass(frozen=True, slots=True)
class MerchantRow:
    """A merchant as users see and edit it; ``has_secret`` instead of the secret."""

    id: str
    key: str
    name: str
    preset: str
    field_paths: dict[str, str]
    rules: list[dict[str, Any]]
    value_choice: str
    value_unit: str | None
    ip_allowlist: list[str]
    has_secret: bool
    warnings: tuple[MerchantWarning, ...]
    dedupe_mode: DedupeMode
    dedupe_window_minutes: int
    hold_days: int | None  # None: the workspace's (trilha.hold)
    created_at: datetime
    updated_at: datetime

    def postback_url(self, public_url: str, token: str) -> str:
        """The URL to paste into the platform's settings; it holds the workspace's token."""
        return f"{public_url}/pb/{self.key}?token={token}"


def _row(row: Any) -> MerchantRow:
    return MerchantRow(
        id=row.id,
        key=row.key,
        name=row.name,
        preset=row.preset,
        field_paths=row.field_paths,
        rules=row.rules,
        value_choice=row.value_choice,
        value_unit=row.value_unit,
        ip_allowlist=row.ip_allowlist,
        has_secret=bool(row.secret),
        warnings=_warnings(row.secret),
        dedupe_mode=DedupeMode(row.dedupe_mode),
        dedupe_window_minutes=row.dedupe_window_minutes,
        hold_days=row.hold_days,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _warnings(secret: str | None) -> tuple[MerchantWarning, ...]:
    return (MerchantWarning.SHORT_SECRET,) if secret and len(secret) < MIN_SECRET else ()


def merchant_config(row: Any) -> Merchant:
    """The mapping the postback pipeline applies, from a merchants row."""
    return Merchant(
        id=row.id,
        key=row.key,
        name=row.name,
        preset=PRESETS[row.preset],
        field_paths=dict(row.field_paths),
        rules=tuple(rule_from_json(r) for r in row.rules),
        value_choice=row.value_choice,
        value_unit=ValueUnit(row.value_unit) if row.value_unit else None,
        ip_allowlist=tuple(row.ip_allowlist),
        secret=row.secret,
        dedupe_mode=DedupeMode(row.dedupe_mode),
        dedupe_window_minutes=row.dedupe_window_minutes,
    )


def check_changes(changes: Mapping[str, Any]) -> dict[str, Any]:
    """Validate every editable field given; InvalidInput names the field at fault."""
    checks = {
        "key": _key,
        "name": lambda v: require_text(str(v), "name", max_length=NAME_MAX),
        "preset": _preset,
        "field_paths": _field_paths,
        "rules": _rules,
        "value_choice": lambda v: _choice(v, "value_choice", ("gross", "net")),
        "value_unit": lambda v: (
            None if v in (None, "") else _choice(v, "value_unit", tuple(ValueUnit))
        ),
        "ip_allowlist": _allowlist,
        "secret": _secret,
        "dedupe_mode": lambda v: _choice(v, "dedupe_mode", tuple(DedupeMode)),
        "dedupe_window_minutes": _window,
        "hold_days": _hold_days,
    }
    unknown = set(changes) - set(checks)
    if unknown:
        raise InvalidInput(dict.fromkeys(sorted(unknown), "is not a merchant field"))
    return {name: checks[name](value) for name, value in changes.items()}


def _hold_days(value: object) -> int | None:
    return None if value in (None, "") else require_hold_days(value)


def _key(value: object) -> str:
    key = str(value).strip().lower()
    if not KEY.fullmatch(key):
        raise InvalidInput({"key": "use 1 to 40 lower-case letters, digits, '-' or '_'"})
    return key


def _secret(value: object) -> str | None:
    """None (no secret) for nothing or blanks; else the secret without the spaces around it."""
    secret = str(value).strip() if value else ""
    if not secret:
        return None
    if len(secret) > MAX_SECRET:
        raise InvalidInput({"secret": f"must be at most {MAX_SECRET} characters"})
    return secret


def _require_guessproof(values: Mapping[str, Any], preset: str) -> None:
    """A secret a person invents must be long enough not to be guessed; a platform's is taken
    as the platform issues it (Kiwify's webhook tokens have 11 characters)."""
    secret = values.get("secret")
    origin = PRESETS[preset].secret_origin
    if secret and origin is SecretOrigin.PERSON and len(secret) < MIN_SECRET:
        raise InvalidInput({"secret": f"must be at least {MIN_SECRET} characters"})


def _preset(value: object) -> str:
    if value not in PRESETS:
        raise InvalidInput({"preset": f"must be one of: {', '.join(PRESETS)}"})
    return str(value)


def _choice(value: object, field: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise InvalidInput({field: f"must be one of: {', '.join(allowed)}"})
    return str(value)


def _field_paths(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise InvalidInput({"field_paths": "must map field names to paths"})
    paths: dict[str, str] = {}
    for name, path in value.items():
        if name not in FIELDS:
            raise InvalidInput({f"field_paths.{name}": f"must be one of: {', '.join(FIELDS)}"})
        if not isinstance(path, str) or not 0 < len(path.strip()) <= 200:
            raise InvalidInput(
                {f"field_paths.{name}": "must be a path such as data.purchase.transaction"}
            )
        paths[name] = path.strip()
    return paths


def _rules(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise InvalidInput({"rules": "must be a list of rules"})
    rules = []
    for index, item in enumerate(value):
        where = f"rules[{index}]"
        if not isinstance(item, Mapping):
            raise InvalidInput({where: "must be an object"})
        if not item.get("when_event") and not item.get("when_status"):
            raise InvalidInput({where: "needs when_event, when_status or both"})
        if item.get("status") not in RULE_STATUSES:
            raise InvalidInput({f"{where}.status": f"must be one of: {', '.join(RULE_STATUSES)}"})
        event_type = str(item.get("event_type", "")).strip().upper()
        if not event_type:
            raise InvalidInput({f"{where}.event_type": "must not be empty"})
        rules.append(
            {
                "when_event": item.get("when_event") or None,
                "when_status": item.get("when_status") or None,
                "event_type": event_type,
                "status": item["status"],
            }
        )
    return rules


def _allowlist(value: object) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise InvalidInput({"ip_allowlist": "must be a list of IP addresses or CIDR networks"})
    networks = []
    for entry in value:
        try:
            networks.append(str(ip_network(str(entry).strip(), strict=False)))
        except ValueError:
            raise InvalidInput(
                {"ip_allowlist": f"{str(entry)[:50]!r} is not an IP or CIDR"}
            ) from None
    return networks


def _window(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_WINDOW:
        raise InvalidInput(
            {"dedupe_window_minutes": f"must be a whole number from 1 to {MAX_WINDOW}"}
        )
    return value


async def create_merchant(
    conn: AsyncConnection, workspace_id: str, *, now: datetime, **fields: Any
) -> MerchantRow:
    values = check_changes(fields)
    for required in ("key", "name", "preset"):
        if required not in values:
            raise InvalidInput({required: "is required"})
    _require_guessproof(values, values["preset"])
    row = {"field_paths": {}, "rules": [], "ip_allowlist": [], **values}
    merchant_id = new_id()
    try:
        async with conn.begin_nested():
            await conn.execute(
                merchants.insert().values(
                    id=merchant_id, workspace_id=workspace_id, created_at=now, updated_at=now, **row
                )
            )
    except IntegrityError:
        raise Conflict("a merchant with this key exists", field="key") from None
    return await get_merchant(conn, workspace_id, merchant_id)


async def update_merchant(
    conn: AsyncConnection, workspace_id: str, merchant_id: str, *, now: datetime, **fields: Any
) -> MerchantRow:
    current = await get_merchant(conn, workspace_id, merchant_id)
    values = check_changes(fields)
    _require_guessproof(values, values.get("preset", current.preset))
    if values:
        try:
            async with conn.begin_nested():
                await conn.execute(
                    update(merchants)
                    .where(merchants.c.id == merchant_id)
                    .values(updated_at=now, **values)
                )
        except IntegrityError:
            raise Conflict("a merchant with this key exists", field="key") from None
    return await get_merchant(conn, workspace_id, merchant_id)


async def get_merchant(conn: AsyncConnection, workspace_id: str, merchant_id: str) -> MerchantRow:
    row = (
        await conn.execute(
            select(merchants).where(
                merchants.c.id == merchant_id, merchants.c.workspace_id == workspace_id
            )
        )
    ).first()
    if row is None:
        raise NotFound("merchant not found")
    return _row(row)


async def list_merchants(conn: AsyncConnection, workspace_id: str) -> list[MerchantRow]:
    rows = await conn.execute(
        select(merchants).where(merchants.c.workspace_id == workspace_id).order_by(merchants.c.name)
    )
    return [_row(row) for row in rows]


async def delete_merchant(conn: AsyncConnection, workspace_id: str, merchant_id: str) -> None:
    """Conversions and log entries keep their rows; their merchant link is cleared."""
    await get_merchant(conn, workspace_id, merchant_id)
    await conn.execute(delete(merchants).where(merchants.c.id == merchant_id))


def load_merchant(
    conn: Connection,
    workspace_id: str,
    *,
    key: str | None = None,
    merchant_id: str | None = None,
) -> Merchant | None:
    query = select(merchants).where(merchants.c.workspace_id == workspace_id)
    if key is not None:
        query = query.where(merchants.c.key == key.lower())
    else:
        query = query.where(merchants.c.id == merchant_id)
    row = conn.execute(query).first()
    return None if row is None else merchant_config(row)


def rule_from_json(item: Mapping[str, Any]) -> Rule:
    return Rule(
        event_type=str(item["event_type"]),
        status=str(item["status"]),
        when_event=item.get("when_event") or None,
        when_status=item.get("when_status") or None,
    )
