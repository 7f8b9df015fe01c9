"""Fill a migrated trilha database with months of realistic traffic, fast and reproducibly.

Run from the repository root:

    .venv/bin/python bench/prefill.py URL [--clicks 5000000] [--days 90] [--conversions 100000]
                                          [--seed 1] [--sizes]

``URL`` is trilha's database (``sqlite+aiosqlite:///path.db`` or
``postgresql+psycopg://user@host/name``), migrated. The clicks go to the oldest workspace (one is
created, with its owner, if there is none), spread over its campaigns and twelve campaigns more
(four traffic sources); the first campaign gets the most. Visitors are IPv4 and IPv6 addresses
with a user agent each from a mix of phones, in-app browsers, desktops and bots (about 6 % of the
clicks), mostly Brazilian; a third of the clicks come back from a visitor seen before, so the
uniqueness flag is computed as trilha does (per campaign, 24 h). Each click fills what its
source sends (utm, sub-ids, ad ids, click ids), traffic grows over the days and follows the hours
of the day. Each conversion (with its status-history rows and postback log entries) is a sale,
lead or upsell on a random human click of its day, some of them later refunded.

Rows go in directly: ``executemany`` on SQLite (without the journal's sync, the click indexes
built after the rows), ``COPY`` on PostgreSQL (then ``VACUUM ANALYZE``). The same seed gives the
same rows but for the database's own ids. ``--sizes`` prints the bytes each table and its indexes
take per click afterwards (:func:`sizes`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sys
import time
from array import array
from bisect import bisect
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import accumulate
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench.* when run as a script

from sqlalchemy import Connection, Table, create_engine, insert, select, text
from sqlalchemy.engine import make_url

from trilha.accounts import create_user
from trilha.db.driver import bind_processors
from trilha.db.engine import make_engine, sync_url
from trilha.db.partitions import MONTHS_AHEAD, Month, ensure_partitions
from trilha.db.schema import (
    campaigns,
    clicks,
    conversion_status_history,
    conversions,
    postback_log,
    traffic_sources,
    workspaces,
)
from trilha.ids import BASE62, CLICK_RANDOM_CHARS, CLICK_TIME_CHARS, RANDOM_ID_CHARS, to_base62
from trilha.passwords import hash_password
from trilha.postbacks.log import MASK
from trilha.visitors import agent_key, parse_device, visitor_key
from trilha.workspaces import create_workspace

CHUNK = 20_000  # rows per executemany or COPY
NEW_VISITOR = 0.68  # share of clicks from a visitor never seen before
REPEAT_SPREAD = 15_000  # a returning visitor is one of about this many most recent ones

# (weight, template): {chrome}, {android}, {model}, {ios}, {fbav}, {ig} vary per visitor.
AGENTS: tuple[tuple[float, str], ...] = (
    (
        24,
        "Mozilla/5.0 (Linux; Android {android}; {model}) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/{chrome} Mobile Safari/537.36",
    ),
    (
        11,
        "Mozilla/5.0 (Linux; Android {android}; {model} Build/TP1A.220624.014; wv) "
        "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/{chrome} Mobile Safari/537.36 "
        "[FB_IAB/FB4A;FBAV/{fbav};]",
    ),
    (
        9,
        "Mozilla/5.0 (Linux; Android {android}; {model} Build/UP1A.231005.007; wv) "
        "AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/{chrome} Mobile Safari/537.36 "
        "Instagram {ig} Android (34/14; 420dpi; 1080x2400; samsung; {model}; a54x; s5e8835; "
        "pt_BR; 601420827)",
    ),
    (
        13,
        "Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1",
    ),
    (
        9,
        "Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/{fbav};FBBV/577208862;"
        "FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.4.1;FBSS/3;FBCR/;FBID/phone;FBLC/pt_BR;"
        "FBOP/80]",
    ),
    (
        8,
        "Mozilla/5.0 (iPhone; CPU iPhone OS {ios} like Mac OS X) AppleWebKit/605.1.15 "
        "(KHTML, like Gecko) Mobile/15E148 Instagram {ig} (iPhone15,3; iOS {ios}; pt_BR; pt; "
        "scale=3.00; 1290x2796; 609240155)",
    ),
    (
        3,
        "Mozilla/5.0 (Linux; Android {android}; {model}) AppleWebKit/537.36 (KHTML, like Gecko) "
        "SamsungBrowser/25.0 Chrome/{chrome} Mobile Safari/537.36",
    ),
    (
        1.5,
        "Mozilla/5.0 (iPad; CPU OS {ios} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/17.4 Mobile/15E148 Safari/604.1",
    ),
    (
        8,
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/{chrome} Safari/537.36",
    ),
    (
        2,
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/{chrome} Safari/537.36 Edg/{chrome}",
    ),
    (
        2,
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        "Version/17.4 Safari/605.1.15",
    ),
    (1, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:126.0) Gecko/20100101 Firefox/126.0"),
    (
        1,
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome} "
        "Safari/537.36",
    ),
    # Bots: link previews, ad reviewers, crawlers, scripts.
    (2.2, "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"),
    (
        0.6,
        "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
    ),
    (0.6, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"),
    (0.5, "AdsBot-Google (+http://www.google.com/adsbot.html)"),
    (0.3, "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"),
    (0.5, "WhatsApp/2.24.6.77 A"),
    (0.2, "TelegramBot (like TwitterBot)"),
    (0.3, "curl/8.5.0"),
    (0.3, "python-requests/2.31.0"),
    (0.2, "Go-http-client/1.1"),
    (
        0.3,
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "HeadlessChrome/{chrome} Safari/537.36",
    ),
)
MODELS = (
    "SM-A155M", "SM-A546E", "SM-A256E", "SM-S911B", "SM-A057M", "moto g54 5G", "moto g84 5G",
    "motorola edge 40 neo", "Redmi Note 13", "22101316G", "M2101K6G", "CPH2591", "LM-K410",
)  # fmt: skip
CHROMES = tuple(f"{major}.0.{build}.{patch}" for major, build, patch in (
    (120, 6099, 230), (121, 6167, 178), (122, 6261, 119), (123, 6312, 118), (124, 6367, 179),
    (125, 6422, 165), (126, 6478, 122), (127, 6533, 103), (128, 6613, 146), (129, 6668, 100),
))  # fmt: skip
IOS = ("16_7_8", "17_3_1", "17_4_1", "17_5", "17_5_1", "17_6_1", "18_0", "18_1")
ANDROIDS = ("11", "12", "13", "14", "15")
FBAVS = ("455.0.0.42.97", "458.0.0.38.108", "464.0.0.43.110", "470.1.0.48.86", "476.0.0.49.74")
IGS = ("330.0.0.40.92", "334.0.4.32.98", "340.0.0.22.109", "345.0.0.36.98")
COUNTRIES = (("BR", 86), ("PT", 3), ("US", 4), ("AR", 2), ("MX", 2), ("CO", 1), ("AO", 1),
             ("ES", 1))  # fmt: skip
# Brazilian address blocks (first octet) for IPv4 visitors; a tenth of visitors use IPv6.
IPV4_FIRST = (177, 179, 186, 187, 189, 191, 200, 201, 138, 143, 152, 170)
IPV6_SHARE = 0.1
# Clicks by hour of the day (UTC; Brazil's evening is 22-02 UTC).
HOURS = (7, 5, 3, 2, 1, 1, 1, 1, 2, 3, 4, 5, 5, 5, 6, 6, 6, 6, 6, 7, 8, 9, 10, 9)
SOURCES = ("Facebook", "Google", "TikTok", "Kwai")
PREFILL_CAMPAIGNS = 12
PLACEMENTS = ("Facebook_Mobile_Feed", "Instagram_Stories", "Instagram_Reels", "Facebook_Reels",
              "Instagram_Feed", "Audience_Network")  # fmt: skip
EVENTS = (("SALE", 70), ("LEAD", 20), ("UPSELL", 10))
PRICES = (9700, 4990, 19700, 29700, 14700, 3700)
FINAL_STATUSES = (("approved", 80), ("pending", 10), ("refunded", 5), ("declined", 3),
                  ("chargeback", 2))  # fmt: skip


@dataclass
class Stats:
    clicks: int = 0
    bots: int = 0
    unique: int = 0
    visitors: int = 0
    conversions: int = 0
    seconds: float = 0.0
    user_agents: int = 0


@dataclass
class _Campaign:
    id: str
    source_id: str | None
    source: str  # one of SOURCES (or "" for a campaign without a source)
    name: str


class _Ids:
    """trilha's id shapes (time first, then random characters) from a seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def at(self, when: datetime, random_chars: int) -> str:
        millis = int(when.timestamp() * 1000)
        chars = self.rng.choices(BASE62, k=random_chars)
        return to_base62(millis, CLICK_TIME_CHARS) + "".join(chars)

    def click(self, when: datetime) -> str:
        return self.at(when, CLICK_RANDOM_CHARS)

    def row(self, when: datetime) -> str:
        return self.at(when, RANDOM_ID_CHARS)

    def token(self, length: int, alphabet: str = BASE62 + "_-") -> str:
        return "".join(self.rng.choices(alphabet, k=length))


def _weighted(pairs: Sequence[tuple[Any, float]]) -> Callable[[random.Random], Any]:
    values = [v for v, _ in pairs]
    cum = list(accumulate(w for _, w in pairs))
    total = cum[-1]
    return lambda rng: values[bisect(cum, rng.random() * total)]


class _Visitors:
    """Every visitor's address, user agent and country, by number (made when first seen)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.addresses = array("Q")  # IPv4 below 2**32; IPv6: bit 63 set, its 63 random bits
        self.agents = array("I")  # index into self.agent_texts
        self.countries = array("B")
        self.agent_texts: list[str] = []
        self.agent_keys: list[int] = []  # trilha.visitors.agent_key of each
        self._agent_index: dict[str, int] = {}
        self._agent = _weighted([(t, w) for w, t in AGENTS])
        self._country = _weighted([(i, w) for i, (_, w) in enumerate(COUNTRIES)])

    def __len__(self) -> int:
        return len(self.addresses)

    def new(self) -> int:
        rng = self.rng
        if rng.random() < IPV6_SHARE:
            self.addresses.append(1 << 63 | rng.getrandbits(63))
        else:
            first = IPV4_FIRST[rng.randrange(len(IPV4_FIRST))]
            self.addresses.append(first << 24 | rng.getrandbits(24))
        agent = self._agent(rng).format(
            chrome=rng.choice(CHROMES),
            android=rng.choice(ANDROIDS),
            model=rng.choice(MODELS),
            ios=rng.choice(IOS),
            fbav=rng.choice(FBAVS),
            ig=rng.choice(IGS),
        )
        index = self._agent_index.get(agent)
        if index is None:
            index = self._agent_index[agent] = len(self.agent_texts)
            self.agent_texts.append(agent)
            self.agent_keys.append(agent_key(agent))
        self.agents.append(index)
        self.countries.append(self._country(rng))
        return len(self.addresses) - 1

    def ip(self, number: int) -> str:
        value = self.addresses[number]
        if value >> 63:
            groups = [(value >> shift) & 0xFFFF for shift in (48, 32, 16, 0)]
            return "2804:{:x}:{:x}:{:x}::{:x}".format(*groups)  # a Brazilian /16, then random
        return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


def _dimensions(rng: random.Random, ids: _Ids, campaign: _Campaign) -> tuple[dict[str, str], str]:
    """What the campaign's source sends with a click, and the referrer."""
    source = campaign.source
    row: dict[str, str] = {}
    referrer = ""
    ad = str(120210000000000 + rng.randrange(400))
    if source == "Facebook":
        placement = rng.choice(PLACEMENTS)
        row = {
            "utm_source": "facebook",
            "utm_medium": "paid",
            "utm_campaign": campaign.name,
            "utm_content": f"ad-{ad[-3:]}",
            "ad_id": ad,
            "adset_id": str(120200000000000 + rng.randrange(40)),
            "placement": placement,
            "fbclid": "IwAR" + ids.token(58),
            "sub1": ad,
            "sub2": placement,
        }
        if rng.random() < 0.4:
            referrer = rng.choice(("https://m.facebook.com/", "https://l.instagram.com/"))
    elif source == "Google":
        row = {
            "utm_source": "google",
            "utm_medium": "cpc",
            "utm_campaign": campaign.name,
            "utm_term": rng.choice(("curso online", "como emagrecer", "renda extra", "ingles")),
            "gclid": "Cj0KCQjw" + ids.token(84),
            "keyword": rng.choice(("curso", "emagrecer", "renda", "ingles")),
            "sub1": str(rng.randrange(10**10, 10**11)),
        }
        if rng.random() < 0.7:
            referrer = "https://www.google.com/"
    elif source == "TikTok":
        row = {
            "utm_source": "tiktok",
            "utm_campaign": campaign.name,
            "ad_id": str(1790000000000000000 + rng.randrange(300)),
            "ttclid": "E.C.P." + ids.token(90),
            "sub1": f"ad{rng.randrange(300)}",
        }
    elif source == "Kwai":
        row = {
            "utm_source": "kwai",
            "sub1": str(rng.randrange(10**8)),
            "sub2": f"creative-{rng.randrange(60)}",
            "sub3": campaign.name,
            "creative": f"cr{rng.randrange(60)}",
        }
    return row, referrer


@dataclass
class _Day:
    clicks: list[dict[str, Any]] = field(default_factory=list)
    humans: list[int] = field(default_factory=list)
    agents: list[tuple[int, str]] = field(default_factory=list)  # (key, text) first seen today


def _days(
    rng: random.Random,
    *,
    count: int,
    days: int,
    now: datetime,
    campaign_list: Sequence[_Campaign],
    stats: Stats,
) -> Iterator[_Day]:
    """The clicks, a day at a time, oldest first, in time order within the day."""
    ids = _Ids(rng)
    visitors = _Visitors(rng)
    # Traffic grows over the period (0.6 → 1.4 of the mean) with ±15 % noise a day.
    weights = [(0.6 + 0.8 * d / max(days - 1, 1)) * rng.uniform(0.85, 1.15) for d in range(days)]
    total = sum(weights)
    per_day = [int(count * w / total) for w in weights]
    per_day[-1] += count - sum(per_day)
    pick_campaign = _weighted([(c, 1 / (n + 1)) for n, c in enumerate(campaign_list)])
    pick_hour = _weighted([(h, w) for h, w in enumerate(HOURS)])
    start = (now - timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0)
    last_seen: dict[tuple[str, int], float] = {}
    devices: dict[int, Any] = {}
    for day, n in enumerate(per_day):
        day_start = start + timedelta(days=day)
        base = day_start.timestamp()
        # The 24 h window of uniqueness: forget what is older than a day before this one.
        horizon = base - 86_400
        last_seen = {k: v for k, v in last_seen.items() if v > horizon}
        stamps = sorted(base + pick_hour(rng) * 3600 + rng.random() * 3600 for _ in range(n))
        out = _Day()
        known_agents = len(visitors.agent_texts)
        for stamp in stamps:
            if stamp >= now.timestamp():
                stamp = now.timestamp() - rng.random() * 60
            created = datetime.fromtimestamp(stamp, UTC)
            if not len(visitors) or rng.random() < NEW_VISITOR:
                number = visitors.new()
            else:
                back = min(int(rng.expovariate(1 / REPEAT_SPREAD)), len(visitors) - 1)
                number = len(visitors) - 1 - back
            campaign = pick_campaign(rng)
            agent_index = visitors.agents[number]
            user_agent = visitors.agent_texts[agent_index]
            device = devices.get(agent_index)
            if device is None:
                device = devices[agent_index] = parse_device(user_agent)
            ip = visitors.ip(number)
            seen_key = (campaign.id, number)
            previous = last_seen.get(seen_key)
            unique = previous is None or previous <= stamp - 86_400
            last_seen[seen_key] = stamp
            dimensions, referrer = _dimensions(rng, ids, campaign)
            params: dict[str, str] = {}
            if rng.random() < 0.2:
                params["xcod"] = ids.token(12, BASE62)
            row: dict[str, Any] = {
                "id": ids.click(created),
                "campaign_id": campaign.id,
                "source_id": campaign.source_id,
                "created_at": created,
                "ip": ip,
                "user_agent_key": visitors.agent_keys[agent_index],
                "visitor_key": visitor_key(campaign.id, ip, user_agent),
                "device_type": device.device_type,
                "os": device.os,
                "browser": device.browser,
                "country": COUNTRIES[visitors.countries[number]][0],
                "referrer": referrer,
                "is_bot": device.is_bot,
                "is_unique": unique,
                "params": params,
                **dimensions,
            }
            if not device.is_bot:
                out.humans.append(len(out.clicks))
            stats.bots += device.is_bot
            stats.unique += unique
            out.clicks.append(row)
        stats.visitors = len(visitors)
        stats.user_agents = len(visitors.agent_texts)
        out.agents = list(
            zip(
                visitors.agent_keys[known_agents:], visitors.agent_texts[known_agents:], strict=True
            )
        )
        yield out


def _conversions_of_day(
    rng: random.Random, ids: _Ids, day: _Day, count: int, now: datetime
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """``count`` conversions on the day's human clicks: their rows, history and log entries."""
    rows: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    logs: list[dict[str, Any]] = []
    pick_event = _weighted([(e, w) for e, w in EVENTS])
    pick_status = _weighted([(s, w) for s, w in FINAL_STATUSES])
    for index in rng.sample(day.humans, min(count, len(day.humans))):
        click = day.clicks[index]
        delay = rng.uniform(30, 1800) if rng.random() < 0.6 else rng.uniform(1800, 3 * 86_400)
        created = min(click["created_at"] + timedelta(seconds=delay), now - timedelta(seconds=1))
        final = pick_status(rng)
        event = pick_event(rng)
        value = rng.choice(PRICES)
        txid = "HP" + str(rng.randrange(10**13, 10**14))
        # Sales arrive pending or approved; a refund or chargeback comes days after approval.
        steps = [("pending" if final in ("pending", "declined") else "approved", created)]
        if final in ("refunded", "chargeback", "declined"):
            later = min(created + timedelta(days=rng.uniform(1, 20)), now - timedelta(seconds=1))
            steps.append((final, later))
        conversion_id = ids.row(created)
        rows.append(
            {
                "id": conversion_id,
                "click_id": click["id"],
                "raw_click_id": click["id"],
                "campaign_id": click["campaign_id"],
                "source_id": click["source_id"],
                "event_type": event,
                "status": steps[-1][0],
                "value_minor": value,
                "currency": "BRL",
                "report_value_minor": value,
                "report_currency": "BRL",
                "rate": "1",
                "rate_source": "same",
                "txid": txid,
                "dedupe_key": f"tx:{txid}",
                "created_at": created,
                "status_changed_at": steps[-1][1],
                "is_test": False,
            }
        )
        previous = None
        for status, at in steps:
            postback_id = ids.row(at)
            value_text = f"{value // 100}.{value % 100:02d}"
            query = (
                f"token={MASK}&click_id={click['id']}&txid={txid}&event={event.lower()}"
                f"&value={value_text}&currency=BRL&status={status}"
            )
            history.append(
                {
                    "id": ids.row(at),
                    "conversion_id": conversion_id,
                    "from_status": previous,
                    "to_status": status,
                    "postback_id": postback_id,
                    "actor": "postback",
                    "created_at": at,
                }
            )
            logs.append(
                {
                    "id": postback_id,
                    "received_at": at,
                    "method": "GET",
                    "path": "/postback",
                    "query": query,
                    "headers": [["user-agent", "Hotmart-Postback/2.0"], ["accept", "*/*"]],
                    "body": "",
                    "body_truncated": False,
                    "source_ip": f"34.{rng.randrange(256)}.{rng.randrange(256)}.7",
                    "auth_failed": False,
                    "outcome": "created" if previous is None else "status_changed",
                    "reason": "",
                    "conversion_id": conversion_id,
                    "campaign_id": click["campaign_id"],
                    "click_id": click["id"],
                    "txid": txid,
                    "event_type": event,
                    "status": status,
                    "value": value_text,
                    "currency": "BRL",
                    "details": {},
                    "processing_us": rng.randrange(150, 900),
                    "replay_of": None,
                }
            )
            previous = status
    return rows, history, logs


# --- writing -----------------------------------------------------------------------------------


class _Writer:
    """Rows of one table at a time into the database, on the blocking driver connection."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.dialect = conn.dialect
        self.postgres = conn.dialect.name == "postgresql"
        driver = conn.connection.driver_connection
        assert driver is not None
        self.driver: Any = driver

    def write(self, table: Table, rows: Sequence[dict[str, Any]], common: dict[str, Any]) -> None:
        if not rows:
            return
        names = [c.name for c in table.columns]
        if self.postgres:
            self._copy(table, names, rows, common)
        else:
            self._insert(table, names, rows, common)

    def _insert(
        self, table: Table, names: list[str], rows: Sequence[dict[str, Any]], common: dict[str, Any]
    ) -> None:
        processors = bind_processors(table, self.dialect)
        converts = [(n, processors[n]) for n in names]
        values = []
        for row in rows:
            values.append(
                tuple(
                    None if (v := row.get(n, common.get(n))) is None else (v if c is None else c(v))
                    for n, c in converts
                )
            )
        sql = (
            f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"  # noqa: S608
        )
        self.driver.cursor().executemany(sql, values)

    def _copy(
        self, table: Table, names: list[str], rows: Sequence[dict[str, Any]], common: dict[str, Any]
    ) -> None:
        special = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
        lines = []
        for row in rows:
            fields = []
            for n in names:
                v = row.get(n, common.get(n))
                if v is None:
                    fields.append("\\N")
                elif isinstance(v, bool):
                    fields.append("t" if v else "f")
                elif isinstance(v, str):
                    fields.append(v.translate(special))
                elif isinstance(v, datetime):
                    fields.append(v.isoformat())
                elif isinstance(v, int):
                    fields.append(str(v))
                else:
                    fields.append(json.dumps(v).translate(special))
            lines.append("\t".join(fields))
        with self.driver.cursor() as cursor:
            sql = f"COPY {table.name} ({', '.join(names)}) FROM STDIN"
            with cursor.copy(sql) as copy:
                copy.write("\n".join(lines) + "\n")


def _workspace(url: str, now: datetime) -> str:
    """The oldest workspace's id; one (and its owner) is made with trilha's functions if none."""

    async def run() -> str:
        engine = make_engine(url)
        try:
            async with engine.begin() as conn:
                found = await conn.scalar(
                    select(workspaces.c.id).order_by(workspaces.c.created_at).limit(1)
                )
                if found is not None:
                    return str(found)
                password_hash = await hash_password(secrets.token_urlsafe(24))
                user = await create_user(
                    conn, email="prefill@example.com", password_hash=password_hash, now=now
                )
                return (await create_workspace(conn, user, name="Prefill", now=now)).id
        finally:
            await engine.dispose()

    return asyncio.run(run())


def _campaigns(
    conn: Connection, rng: random.Random, workspace_id: str, now: datetime
) -> list[_Campaign]:
    """The workspace's campaigns (first), then four traffic sources and twelve campaigns more."""
    ids = _Ids(rng)
    found = [
        _Campaign(id=row.id, source_id=row.source_id, source="Facebook", name=row.slug)
        for row in conn.execute(
            select(campaigns.c.id, campaigns.c.source_id, campaigns.c.slug)
            .where(campaigns.c.workspace_id == workspace_id)
            .order_by(campaigns.c.created_at)
        )
    ]
    tag = ids.token(6, BASE62).lower()
    source_ids = {}
    for name in SOURCES:
        source_ids[name] = ids.row(now)
        conn.execute(
            insert(traffic_sources).values(
                id=source_ids[name],
                workspace_id=workspace_id,
                name=f"{name} {tag}",
                params=[],
                created_at=now,
            )
        )
    made = []
    for n in range(PREFILL_CAMPAIGNS):
        source = SOURCES[n % len(SOURCES)]
        slug = f"p{tag}-{n}"
        made.append(_Campaign(id=ids.row(now), source_id=source_ids[source], source=source,
                              name=slug))  # fmt: skip
        conn.execute(
            insert(campaigns).values(
                id=made[-1].id,
                workspace_id=workspace_id,
                name=f"Campanha {n + 1} ({source})",
                slug=slug,
                offer_url="https://oferta.example.com/checkout?src={utm_source}&cid={click_id}",
                source_id=source_ids[source],
                created_at=now - timedelta(days=120),
                updated_at=now - timedelta(days=120),
            )
        )
    return found + made


def prefill(
    url: str,
    *,
    clicks_count: int = 5_000_000,
    days: int = 90,
    conversions_count: int = 100_000,
    seed: int = 1,
    now: datetime | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> Stats:
    """Fill trilha's migrated database at ``url`` (see the module's docstring)."""
    if clicks_count < 0 or conversions_count < 0 or days < 1:
        raise ValueError("counts must be positive, and days at least 1")
    now = now or datetime.now(UTC)
    started = time.monotonic()
    rng = random.Random(seed)
    stats = Stats()
    workspace_id = _workspace(url, now)
    engine = create_engine(sync_url(url))
    sqlite = make_url(url).get_backend_name() == "sqlite"
    try:
        with engine.connect() as conn:
            if sqlite:
                # A scratch fill: a crash leaves a database to throw away, not one to recover.
                conn.exec_driver_sql("PRAGMA journal_mode=DELETE")
                conn.exec_driver_sql("PRAGMA synchronous=OFF")
                conn.exec_driver_sql("PRAGMA cache_size=-262144")
                conn.commit()
            with conn.begin():
                campaign_list = _campaigns(conn, rng, workspace_id, now)
                if not sqlite:  # each month's rows in its partition, as a grown database has
                    _partitions_since(conn, now - timedelta(days=days), now)
                # Built again once the rows are in: much faster than row by row.
                for index in clicks.indexes:
                    index.drop(conn)
            writer = _Writer(conn)
            ids = _Ids(random.Random(seed + 1))
            per_click = conversions_count / clicks_count if clicks_count else 0.0
            owed = 0.0
            common = {"workspace_id": workspace_id}
            for day in _days(
                rng, count=clicks_count, days=days, now=now, campaign_list=campaign_list,
                stats=stats,
            ):  # fmt: skip
                with conn.begin():
                    _store_agents(conn, day.agents)
                    for at in range(0, len(day.clicks), CHUNK):
                        writer.write(clicks, day.clicks[at : at + CHUNK], common)
                    owed += per_click * len(day.clicks)
                    due = min(round(owed), conversions_count - stats.conversions)
                    owed -= due
                    rows, history, logs = _conversions_of_day(rng, ids, day, due, now)
                    writer.write(conversions, rows, common)
                    writer.write(postback_log, logs, common)
                    writer.write(conversion_status_history, history, {})
                stats.clicks += len(day.clicks)
                stats.conversions += len(rows)
                progress(f"{stats.clicks:,} clicks, {stats.conversions:,} conversions")
            progress("building the click indexes")
            with conn.begin():
                for index in clicks.indexes:
                    index.create(conn)
            if sqlite:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
            else:
                conn.commit()
                conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                    "VACUUM ANALYZE"
                )
    finally:
        engine.dispose()
    stats.seconds = round(time.monotonic() - started, 1)
    return stats


def _partitions_since(conn: Connection, first: datetime, now: datetime) -> None:
    """PostgreSQL: the partitions of every month from ``first``'s to those the worker makes
    ahead of ``now``'s (the worker makes only those)."""
    start, end = Month.of(first), Month.of(now)
    ahead = (end.year - start.year) * 12 + end.month - start.month + MONTHS_AHEAD
    ensure_partitions(conn, now=first, ahead=ahead)


_AGENTS_SQL = text(
    "INSERT INTO user_agents (key, agent) VALUES (:key, :agent) ON CONFLICT DO NOTHING"
)


def _store_agents(conn: Connection, agents: Sequence[tuple[int, str]]) -> None:
    if agents:
        conn.execute(_AGENTS_SQL, [{"key": key, "agent": agent} for key, agent in agents])


# --- sizes -------------------------------------------------------------------------------------

SIZED_TABLES = (
    "clicks",
    "user_agents",
    "conversions",
    "conversion_status_history",
    "postback_log",
)


def sizes(url: str) -> dict[str, Any]:
    """Bytes each of SIZED_TABLES and each of its indexes takes, with the bytes per click (all
    of a table's bytes over the clicks' count): SQLite's ``dbstat`` pages, PostgreSQL's
    ``pg_table_size`` (the table with its TOAST, each index apart), summed over the partitions
    of a partitioned one (PostgreSQL lists no tree for a table that is not)."""
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            count = conn.execute(text("SELECT count(*) FROM clicks")).scalar_one()
            result: dict[str, Any] = {"clicks": count, "tables": {}}
            for name in SIZED_TABLES:
                if conn.dialect.name == "sqlite":
                    parts = dict(
                        conn.execute(
                            text(
                                "SELECT d.name, sum(d.pgsize) FROM dbstat AS d JOIN sqlite_master"
                                " AS m ON m.name = d.name WHERE m.tbl_name = :t GROUP BY d.name"
                            ),
                            {"t": name},
                        ).all()
                    )
                else:  # a partitioned table's (and index's) bytes are its partitions'
                    parts = {
                        name: int(
                            conn.execute(
                                text(
                                    "SELECT coalesce(sum(pg_table_size(relid)),"
                                    " pg_table_size(CAST(:t AS regclass)))"
                                    " FROM pg_partition_tree(CAST(:t AS regclass)) WHERE isleaf"
                                ),
                                {"t": name},
                            ).scalar_one()
                        )
                    }
                    parts |= dict(
                        conn.execute(
                            text(
                                "SELECT CAST(CAST(i.indexrelid AS regclass) AS text),"
                                " (SELECT coalesce(sum(pg_relation_size(p.relid)),"
                                "  pg_relation_size(i.indexrelid))"
                                "  FROM pg_partition_tree(i.indexrelid) AS p WHERE p.isleaf)"
                                " FROM pg_index AS i WHERE i.indrelid = CAST(:t AS regclass)"
                            ),
                            {"t": name},
                        ).all()
                    )
                total = int(sum(parts.values()))
                result["tables"][name] = {
                    "bytes": total,
                    "per_click": round(total / count, 1) if count else None,
                    "parts": {k: int(v) for k, v in sorted(parts.items())},
                }
            return result
    finally:
        engine.dispose()


def render_sizes(found: dict[str, Any]) -> str:
    lines = [
        f"{found['clicks']:,} clicks",
        "| table or index | MB | bytes per click |",
        "|---|---:|---:|",
    ]
    for name, table in found["tables"].items():
        lines.append(f"| **{name}** | {table['bytes'] / 1e6:,.1f} | {table['per_click']} |")
        for part, size in table["parts"].items():
            per = round(size / found["clicks"], 1) if found["clicks"] else "-"
            lines.append(f"| {part} | {size / 1e6:,.1f} | {per} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("url", help="trilha's database URL (migrated)")
    parser.add_argument("--clicks", type=int, default=5_000_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--conversions", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", action="store_true", help="print the bytes stored per click")
    parser.add_argument("--only-sizes", action="store_true", help="print the sizes, fill nothing")
    args = parser.parse_args(argv)
    if not args.only_sizes:
        stats = prefill(
            args.url,
            clicks_count=args.clicks,
            days=args.days,
            conversions_count=args.conversions,
            seed=args.seed,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
        print(json.dumps(stats.__dict__))
    if args.sizes or args.only_sizes:
        print(render_sizes(sizes(args.url)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
