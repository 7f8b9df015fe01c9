"""A click: what it records and the offer URL it sends the visitor to."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple
from urllib.parse import unquote_plus
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, Dialect

from trilha.costs.units import click_cost
from trilha.db.bounds import max_lengths
from trilha.db.driver import Cursor, bind_processors, driver_cursor, driver_sql
from trilha.db.schema import clicks
from trilha.dimensions import DIMENSIONS
from trilha.ids import mint_click_id
from trilha.links import Link
from trilha.macros import TEMPLATE_CACHE_SIZE, compile_template, unknown_macros, url_value
from trilha.reports.rollups import add_clicks
from trilha.visitors import Device, Visitor, agent_key

UNIQUE_WINDOW = timedelta(hours=24)
MAX_PARAMS = 64
MAX_NAME_LENGTH = 64
MAX_VALUE_LENGTH = 1024
# In a click's params: the names of the query parameters (and headers) cut to their limits.
CUT_NOTE = "_trilha_cut"
_DIMENSIONS = frozenset(DIMENSIONS)
# The bounded columns a click fills from what the visitor sent (the device's names are bounded
# by visitors.parse_device; the other bounded columns hold trilha's own ids).
_IP_LENGTH = max_lengths(clicks)["ip"]
_COUNTRY_LENGTH = max_lengths(clicks)["country"]


class ClickRequest(NamedTuple):
    """One visit to a tracking link, as the redirect saw it. A NamedTuple, not a frozen
    dataclass: every click makes one, and a frozen dataclass's ``__init__`` costs three times
    as much (bench/instructions.py)."""

    host: str
    slug: str
    visitor: Visitor
    params: Mapping[str, str]
    now: datetime
    cut: Sequence[str] = ()  # what was cut to its limit, noted in the click's params


def query_params(query: str) -> dict[str, str]:
    """A query string's parameters as parse_qsl reads them (``+`` is a space, ``%xx`` decoded,
    bad UTF-8 replaced), keeping the first value of each, within size limits, without NULs.

    >>> query_params("sub1=a&sub1=b&x%00=y+z&flag&=v")
    {'sub1': 'a', 'x': 'y z', 'flag': ''}
    """
    return read_query(query)[0]


def read_query(query: str) -> tuple[dict[str, str], list[str]]:
    """``query_params``, and the names of the parameters whose name or value was cut.

    >>> read_query(f"sub1={'x' * 2000}&sub2=b")[1]
    ['sub1']
    """
    pieces = query.split("&")
    if (
        "%" not in query
        and "+" not in query
        and "\x00" not in query
        and len(query) <= MAX_VALUE_LENGTH
        and len(pieces) <= MAX_PARAMS
    ):
        # Most queries: nothing to decode, no value nor count over its limit; only a name can
        # be (then the whole query is read as below).
        params: dict[str, str] = {}
        for piece in pieces:
            name, _, value = piece.partition("=")
            if len(name) > MAX_NAME_LENGTH:
                break
            if name and name not in params:
                params[name] = value
        else:
            return params, []
    return _read_pieces(pieces)


def _read_pieces(pieces: list[str]) -> tuple[dict[str, str], list[str]]:
    params: dict[str, str] = {}
    cut: list[str] = []
    for piece in pieces:
        name, _, value = piece.partition("=")
        if "%" in name or "+" in name:
            name = unquote_plus(name, errors="replace")
        name = name.replace("\x00", "")
        name_cut = len(name) > MAX_NAME_LENGTH
        if name_cut:
            name = name[:MAX_NAME_LENGTH]
        if not name or name in params:
            continue
        if len(params) == MAX_PARAMS:
            break
        if "%" in value or "+" in value:
            value = unquote_plus(value, errors="replace")
        value = value.replace("\x00", "")
        if name_cut or len(value) > MAX_VALUE_LENGTH:
            value = value[:MAX_VALUE_LENGTH]
            cut.append(name)
        params[name] = value
    return params, cut


def build_click(
    link: Link, request: ClickRequest, *, click_id: str, visitor_key: int, is_unique: bool
) -> dict[str, Any]:
    """The click as ``click_view`` reads it, with the key of its user agent: the columns every
    click fills, plus the ad dimensions its query parameters (or the traffic source's own names
    for them) fill; the other parameters go into ``params``, with a note of what was cut."""
    visitor = request.visitor
    device = visitor.device
    params = request.params
    consumed = link.consumed
    kept: dict[str, Any] = {}  # the parameters no column takes (and what was cut)
    ip, country = visitor.ip, visitor.country
    if len(ip) > _IP_LENGTH:  # an IPv6 address with a long zone ("fe80::1%...")
        ip = ip[:_IP_LENGTH]
    if len(country) > _COUNTRY_LENGTH:  # a user-supplied MaxMind database
        country = country[:_COUNTRY_LENGTH]
    row: dict[str, Any] = {
        "id": click_id,
        "workspace_id": link.workspace_id,
        "campaign_id": link.campaign_id,
        "created_at": request.now,
        "ip": ip,
        "user_agent": visitor.user_agent,
        "user_agent_key": agent_key(visitor.user_agent),
        "visitor_key": visitor_key,
        "device_type": device.device_type,
        "os": device.os,
        "browser": device.browser,
        "country": country,
        "referrer": visitor.referrer,
        "is_bot": device.is_bot,
        "is_unique": is_unique and not device.is_bot,  # a unique click is a person's
        "params": kept,
    }
    for name, value in params.items():  # one pass: a dimension's column, or kept in params
        if name in _DIMENSIONS:
            row[name] = value
        elif name not in consumed:
            kept[name] = value
    if request.cut:
        kept[CUT_NOTE] = list(request.cut)
    if link.source_id is not None:
        row["source_id"] = link.source_id
    if "cost" in params:
        cost = click_cost(params["cost"], link.currency)
        if cost is not None:
            row["cost"] = cost
    for param, field in link.source_params:
        if field in _DIMENSIONS and param in params:
            row[field] = params[param]
    return row


def _date(link: Link, click: Mapping[str, Any]) -> str:
    created_at: datetime = click["created_at"]
    return created_at.astimezone(ZoneInfo(link.timezone)).date().isoformat()


def _dimension(name: str) -> Callable[[Link, Mapping[str, Any]], str]:
    return lambda _, click: click.get(name) or ""


# The built-in macros, each from the campaign and the click row; the dimensions (sub1, utm_*, ...)
# come from the row, where the traffic source's mapping already put them.
_BUILTIN_VALUES: dict[str, Callable[[Link, Mapping[str, Any]], str]] = {
    "click_id": lambda _, click: click["id"],
    "campaign_id": lambda link, _: link.campaign_id,
    "campaign_name": lambda link, _: link.name,
    "campaign_slug": lambda link, _: link.slug,
    "source": lambda link, _: link.source_name,
    "source_id": lambda link, _: link.source_id or "",
    "device": lambda _, click: click["device_type"],
    "os": lambda _, click: click["os"],
    "browser": lambda _, click: click["browser"],
    "country": lambda _, click: click["country"],
    "ip": lambda _, click: click["ip"],
    "user_agent": lambda _, click: click["user_agent"],
    "referrer": lambda _, click: click["referrer"],
    "timestamp": lambda _, click: str(int(click["created_at"].timestamp())),
    "date": _date,
    "random": lambda _, __: str(secrets.randbelow(1_000_000_000)),
    **{name: _dimension(name) for name in DIMENSIONS},
}


def macro_values(
    link: Link, click: Mapping[str, Any], params: Mapping[str, str], names: Iterable[str]
) -> dict[str, str]:
    """The value of each of ``names`` that has one: a built-in, else the incoming parameter."""
    values: dict[str, str] = {}
    for name in names:
        builtin = _BUILTIN_VALUES.get(name)
        if builtin is not None:
            values[name] = builtin(link, click)
        elif name in params:
            values[name] = params[name]
    return values


def offer_url(link: Link, click: Mapping[str, Any], params: Mapping[str, str]) -> str:
    """The campaign's offer URL, its macros filled for this click (see trilha.macros)."""
    first, steps = _offer_steps(link.offer_url)
    out = [first]
    for name, builtin, safe, written, literal in steps:
        value = builtin(link, click) if builtin is not None else params.get(name)
        out.append(written if value is None else url_value(value, safe))
        out.append(literal)
    return "".join(out)


_Step = tuple[str, Callable[[Link, Mapping[str, Any]], str] | None, str, str, str]


@lru_cache(maxsize=TEMPLATE_CACHE_SIZE)
def _offer_steps(template: str) -> tuple[str, tuple[_Step, ...]]:
    """An offer URL's text before its first macro, then each macro with its built-in value (or
    None: an incoming parameter's), the characters it leaves unencoded, the macro as written
    and the text after it: ``offer_url`` fills a campaign's every click from this."""
    compiled = compile_template(template)
    steps = tuple(
        (name, _BUILTIN_VALUES.get(name), safe, written, literal)
        for (name, safe, written), literal in zip(
            compiled.macros, compiled.literals[1:], strict=True
        )
    )
    return compiled.literals[0], steps


def record_clicks(
    conn: Connection, batch: Sequence[tuple[Link, ClickRequest]]
) -> list[dict[str, Any]]:
    """Insert one batch of clicks in conn's transaction, on the driver's cursor; a visitor seen
    on the campaign in the last 24 h is not unique, nor is a bot."""
    if not batch:
        return []
    cursor = driver_cursor(conn)
    dialect = conn.dialect
    keys = [request.visitor.key(link.campaign_id) for link, request in batch]
    seen = _recent_visitors(cursor, dialect, keys, min(request.now for _, request in batch))
    rows = []
    for (link, request), key in zip(batch, keys, strict=True):
        rows.append(
            build_click(
                link,
                request,
                click_id=mint_click_id(request.now),
                visitor_key=key,
                is_unique=key not in seen,
            )
        )
        seen.add(key)
    _store_agents(cursor, dialect, rows)
    if dialect.name == "postgresql":
        _copy(cursor, rows)
    else:
        _insert(cursor, dialect, rows)
    add_clicks(conn, rows)
    return rows


_AGENTS_SQL = {
    "sqlite": "INSERT OR IGNORE INTO user_agents (key, agent)"
    " SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(:agents)",
    "postgresql": "INSERT INTO user_agents (key, agent)"
    " SELECT CAST(value ->> 0 AS BIGINT), value ->> 1"
    " FROM json_array_elements(CAST(:agents AS JSON)) ON CONFLICT DO NOTHING",
}


def _store_agents(cursor: Cursor, dialect: Dialect, rows: Sequence[Mapping[str, Any]]) -> None:
    """The batch's user agents not stored yet, in one statement (in key order, so that two
    processes storing the same new agents wait for each other rather than deadlock)."""
    agents = sorted({(row["user_agent_key"], row["user_agent"]) for row in rows})
    sql = driver_sql(_AGENTS_SQL[dialect.name], dialect.paramstyle)
    cursor.execute(sql, {"agents": json.dumps(agents)})


# Click columns a row often leaves empty: on SQLite each INSERT names only those its rows fill,
# since binding a NULL costs the driver more than binding a value (Python's sqlite3 looks for an
# adapter, and fails, for every None).
_COLUMNS = tuple(c.name for c in clicks.columns)
_OPTIONAL_COLUMNS = frozenset({"source_id", "cost", *DIMENSIONS})
_REQUIRED_COLUMNS = tuple(name for name in _COLUMNS if name not in _OPTIONAL_COLUMNS)
_OPTIONAL_ORDER = tuple(name for name in _COLUMNS if name in _OPTIONAL_COLUMNS)


@lru_cache
def _conversions(dialect: Dialect) -> tuple[tuple[int, Callable[[Any], Any]], ...]:
    """The required columns' conversions on one driver: (position, the type's conversion)."""
    conversions = []
    for name, convert in bind_processors(clicks, dialect).items():
        if convert is None:
            continue
        if name in _OPTIONAL_COLUMNS:
            raise TypeError(f"optional click column {name} must need no conversion")
        conversions.append((_REQUIRED_COLUMNS.index(name), convert))
    return tuple(conversions)


@lru_cache(maxsize=1024)
def _shape(keys: tuple[str, ...]) -> tuple[tuple[str, ...], Callable[[Mapping[str, Any]], Any]]:
    """The optional columns a row with these keys fills (in the table's order), and what reads
    the row's values for its INSERT: the required columns', then those. Cached, since a
    campaign's clicks mostly share their keys."""
    filled = tuple(name for name in _OPTIONAL_ORDER if name in keys)
    return filled, itemgetter(*_REQUIRED_COLUMNS, *filled)


@lru_cache(maxsize=1024)
def _insert_sql(filled: tuple[str, ...]) -> str:
    """The INSERT of the required columns plus the optional ones ``filled``."""
    names = (*_REQUIRED_COLUMNS, *filled)
    columns, markers = ", ".join(names), ", ".join(["?"] * len(names))
    return f"INSERT INTO clicks ({columns}) VALUES ({markers})"  # noqa: S608 -- the schema's own column names


def _insert(cursor: Cursor, dialect: Dialect, rows: Sequence[Mapping[str, Any]]) -> None:
    """SQLite: one executemany per set of filled optional columns (a campaign's clicks mostly
    share one), each row a plain tuple whose values went through their column type's own
    conversion, so that a row is stored exactly as SQLAlchemy would store it."""
    conversions = _conversions(dialect)
    shapes: dict[tuple[str, ...], list[list[Any]]] = {}
    for row in rows:
        filled, read = _shape(tuple(row))
        values = list(read(row))
        for position, convert in conversions:
            values[position] = convert(values[position])
        shapes.setdefault(filled, []).append(values)
    for filled, parameters in shapes.items():
        cursor.executemany(_insert_sql(filled), parameters)


_COPY_SQL = f"COPY clicks ({', '.join(_COLUMNS)}) FROM STDIN"
_COPY_SPECIAL = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy(cursor: Cursor, rows: Sequence[Mapping[str, Any]]) -> None:
    """PostgreSQL: the whole batch in one COPY, as text lines built here: psycopg adapting each
    value of each row cost more than the COPY itself."""
    lines = []
    for row in rows:
        fields = []
        for name in _COLUMNS:
            value = row.get(name)
            if value is None:
                fields.append("\\N")
            elif isinstance(value, str):
                fields.append(_copy_text(value))
            elif isinstance(value, bool):
                fields.append("t" if value else "f")
            elif isinstance(value, datetime):
                fields.append(value.isoformat())
            else:
                fields.append(_copy_text(json.dumps(value)))
        lines.append("\t".join(fields))
    cursor.copy_text(_COPY_SQL, "\n".join(lines) + "\n")


def _copy_text(value: str) -> str:
    if "\\" in value or "\t" in value or "\n" in value or "\r" in value:
        return value.translate(_COPY_SPECIAL)
    return value


# Which of a list of visitor keys (each a visitor on a campaign) clicked since a time. Each key
# costs one probe of the visitor index, which holds both columns the probe needs and stops at its
# first click: a DISTINCT over the matching clicks would read every click of a visitor who
# clicked ten thousand times. A scalar subquery with LIMIT 1 rather than EXISTS, so that
# PostgreSQL cannot turn it into a hash join over all the clicks when its statistics are stale (a
# young, fast-growing clicks table).
_RECENT_VISITORS_SQL = """
SELECT keys.value FROM {keys} WHERE (
    SELECT 1 FROM clicks WHERE visitor_key = keys.value AND created_at > :since LIMIT 1
) IS NOT NULL
"""
_KEYS = {
    "sqlite": "json_each(:keys) AS keys",
    "postgresql": "(SELECT CAST(value AS BIGINT) AS value"
    " FROM json_array_elements_text(CAST(:keys AS JSON))) AS keys",
}


def _recent_visitors(
    cursor: Cursor, dialect: Dialect, keys: Sequence[int], earliest: datetime
) -> set[int]:
    """Which visitor keys have a click in the window before ``earliest``."""
    since: Any = earliest - UNIQUE_WINDOW
    if (convert := bind_processors(clicks, dialect)["created_at"]) is not None:
        since = convert(since)
    sql = driver_sql(_RECENT_VISITORS_SQL.format(keys=_KEYS[dialect.name]), dialect.paramstyle)
    cursor.execute(sql, {"keys": json.dumps(sorted(set(keys))), "since": since})
    return {key for (key,) in cursor.fetchall()}


@dataclass(frozen=True, slots=True)
class Preview:
    url: str
    unknown_macros: tuple[str, ...]


SAMPLE_VISITOR = Visitor(
    ip="203.0.113.7",
    user_agent="Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148",
    referrer="https://m.facebook.com/",
    device=Device(device_type="mobile", os="iOS", browser="Mobile Safari", is_bot=False),
    country="BR",
)


def preview_offer_url(
    template: str,
    params: Mapping[str, str],
    *,
    campaign_name: str = "Campaign",
    slug: str = "slug",
    timezone: str = "America/Sao_Paulo",
    now: datetime,
) -> Preview:
    """The URL a click with these query parameters would go to, and the macros nothing fills."""
    link = Link(
        campaign_id="CAMPAIGN_ID",
        workspace_id="",
        name=campaign_name,
        slug=slug,
        offer_url=template,
        source_id=None,
        source_name="",
        source_params=(),
        timezone=timezone,
    )
    request = ClickRequest(host="", slug=slug, visitor=SAMPLE_VISITOR, params=params, now=now)
    click = build_click(
        link,
        request,
        click_id=mint_click_id(),
        visitor_key=SAMPLE_VISITOR.key(link.campaign_id),
        is_unique=True,
    )
    return Preview(offer_url(link, click, params), unknown_macros(template, params))
