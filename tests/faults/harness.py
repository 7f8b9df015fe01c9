"""Clicks and postbacks over loopback while `trilha serve` is killed (SIGKILL) and restarted.

A click is acknowledged by its 302, whose Location carries the click id; a postback (a unique
txid on an acknowledged click) by any 2xx. A postback that got no 2xx is sent again later, as a
sales platform does. At the end, every acknowledged click must be stored, every acknowledged
postback must be one conversion on its click, and no txid may be counted twice; and the hourly
sums the reports read (trilha.reports.rollups) must equal the click rows they sum.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import Connection, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.factories import make_campaign, make_workspace
from tests.faults.server import Server
from trilha.db.engine import make_engine
from trilha.db.schema import click_hours, click_sub1_hours, clicks, conversions

OFFER = "https://offer.example.com/buy?c="
CLICKERS = 6
POSTBACKERS = 3
# Uptime before each kill, in seconds: from "just started" to "busy for a while".
UPTIME = (0.1, 2.5)
# After the last restart: time to settle, then rounds of resending unacknowledged postbacks.
SETTLE = 1.0
RESEND_ROUNDS = 5
# Of the requests the server answered at all (the others met it down), the share it must have
# acknowledged: a server that answers 5xx to most passes nothing by losing nothing.
ACKNOWLEDGED_SHARE = 0.95
TIMEOUT = httpx.Timeout(10.0)
PAUSE = 0.05


@dataclass(frozen=True, slots=True)
class Report:
    seed: int
    kills: int
    clicks_sent: int
    click_answers: int  # requests that got any HTTP answer (the rest met a server down)
    clicks_acknowledged: int
    clicks_stored: int  # of those acknowledged
    clicks_in_database: int
    postbacks_sent: int  # requests, resends included
    postback_answers: int  # requests that got any HTTP answer
    postbacks_answered_2xx: int
    txids_sent: int
    postbacks_acknowledged: int  # txids
    postbacks_stored: int  # acknowledged txids with exactly one conversion on their click
    conversions_in_database: int
    duplicates: int  # conversions beyond the first for any txid
    rollups_off: int  # (hour, campaign, sub1) sums that differ from the click rows
    seconds: float

    @property
    def clicks_acknowledged_share(self) -> float:
        """Of the clicks the server answered, the share it answered with its 302."""
        return self.clicks_acknowledged / self.click_answers if self.click_answers else 0.0

    @property
    def postbacks_acknowledged_share(self) -> float:
        """Of the postbacks the server answered, the share it answered 2xx."""
        return self.postbacks_answered_2xx / self.postback_answers if self.postback_answers else 0.0

    @property
    def holds(self) -> bool:
        return (
            self.clicks_acknowledged_share >= ACKNOWLEDGED_SHARE
            and self.postbacks_acknowledged_share >= ACKNOWLEDGED_SHARE
            and self.clicks_stored == self.clicks_acknowledged
            and self.postbacks_stored == self.postbacks_acknowledged
            and self.duplicates == 0
            and self.rollups_off == 0
            and self.clicks_in_database <= self.clicks_sent
        )

    def lines(self) -> list[str]:
        return [
            f"seed {self.seed}, {self.kills} kills, {self.seconds:.0f} s",
            f"clicks: {self.clicks_sent} sent, {self.click_answers} answered,"
            f" {self.clicks_acknowledged} acknowledged ({self.clicks_acknowledged_share:.1%}),"
            f" {self.clicks_stored} of them stored, {self.clicks_in_database} in the database",
            f"postbacks: {self.postbacks_sent} requests for {self.txids_sent} txids,"
            f" {self.postback_answers} answered,"
            f" {self.postbacks_answered_2xx} with 2xx ({self.postbacks_acknowledged_share:.1%}),"
            f" {self.postbacks_acknowledged} txids acknowledged,"
            f" {self.postbacks_stored} of them stored once on their click,"
            f" {self.conversions_in_database} conversions in the database",
            f"duplicates: {self.duplicates}",
            f"hourly sums that differ from the click rows: {self.rollups_off}",
            "PASS" if self.holds else "FAIL",
        ]


@dataclass
class Traffic:
    """What was sent and what the server acknowledged."""

    clicks_sent: int = 0
    click_answers: int = 0  # any HTTP answer: a 302, or a 5xx
    clicks: list[str] = field(default_factory=list)  # acknowledged click ids, in order
    postbacks_sent: int = 0
    postback_answers: int = 0
    postbacks_answered_2xx: int = 0
    txids: dict[str, str] = field(default_factory=dict)  # every txid sent → its click id
    acknowledged: set[str] = field(default_factory=set)  # txids
    unacknowledged: list[str] = field(default_factory=list)  # txids to send again
    next_click: int = 0  # clicks[next_click:] have no postback yet


class Run:
    def __init__(self, server: Server, slug: str, token: str, seed: int) -> None:
        self.server = server
        self.slug = slug
        self.token = token
        # The kill moments come from the seed alone, so that a run can be replayed; the rest of
        # the traffic depends on how fast the server answers.
        self.kill_moments = random.Random(seed)
        self.rng = random.Random(seed + 1)
        self.traffic = Traffic()
        self.stopping = asyncio.Event()

    async def click(self, http: httpx.AsyncClient) -> None:
        self.traffic.clicks_sent += 1
        try:
            response = await http.get(f"{self.server.base}/r/{self.slug}")
        except httpx.TransportError:
            await asyncio.sleep(PAUSE)  # the server is down: don't spin while it restarts
            return
        self.traffic.click_answers += 1
        if response.status_code == 302:
            self.traffic.clicks.append(response.headers["location"].removeprefix(OFFER))

    async def postback(self, http: httpx.AsyncClient, txid: str) -> None:
        """One delivery attempt; GET with a query string or POST with a form body, at random."""
        fields = {"click_id": self.traffic.txids[txid], "txid": txid, "payout": "12,50"}
        url = f"{self.server.base}/postback"
        self.traffic.postbacks_sent += 1
        try:
            if self.rng.random() < 0.5:
                response = await http.get(url, params={"token": self.token, **fields})
            else:
                response = await http.post(url, params={"token": self.token}, data=fields)
        except httpx.TransportError:
            await asyncio.sleep(PAUSE)
            response = None
        if response is not None:
            self.traffic.postback_answers += 1
        if response is not None and response.is_success:
            self.traffic.postbacks_answered_2xx += 1
            self.traffic.acknowledged.add(txid)
        else:
            self.traffic.unacknowledged.append(txid)

    def next_txid(self) -> str | None:
        """A resend first, as a platform retries; else a new txid on the next acknowledged click."""
        traffic = self.traffic
        if traffic.unacknowledged and self.rng.random() < 0.5:
            return traffic.unacknowledged.pop(0)
        if traffic.next_click == len(traffic.clicks):
            return traffic.unacknowledged.pop(0) if traffic.unacknowledged else None
        txid = f"T{len(traffic.txids) + 1}"
        traffic.txids[txid] = traffic.clicks[traffic.next_click]
        traffic.next_click += 1
        return txid

    async def clicker(self) -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            while not self.stopping.is_set():
                await self.click(http)

    async def postbacker(self) -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            while not self.stopping.is_set():
                txid = self.next_txid()
                if txid is None:
                    await asyncio.sleep(PAUSE)
                else:
                    await self.postback(http, txid)

    async def killer(self, kills: int, say: Callable[[str], None]) -> None:
        for kill in range(1, kills + 1):
            uptime = self.kill_moments.uniform(*UPTIME)
            await asyncio.sleep(uptime)
            await asyncio.to_thread(self.server.kill)
            say(f"kill {kill}/{kills} after {uptime:.2f} s up ({self.progress()})")
            await asyncio.to_thread(self.server.start)
        await asyncio.sleep(SETTLE)
        self.stopping.set()

    async def resend_unacknowledged(self) -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            for _ in range(RESEND_ROUNDS):
                pending, self.traffic.unacknowledged = self.traffic.unacknowledged, []
                for txid in dict.fromkeys(pending):
                    await self.postback(http, txid)

    def progress(self) -> str:
        traffic = self.traffic
        return (
            f"{len(traffic.clicks)} clicks and {len(traffic.acknowledged)} postbacks acknowledged"
        )


async def run_faults(
    database_url: str,
    workdir: Path,
    *,
    kills: int,
    seed: int,
    workers: int = 2,
    say: Callable[[str], None] = print,
) -> Report:
    """Drive traffic while killing the server ``kills`` times; check what was stored."""
    started = time.monotonic()
    say(f"fault run: seed {seed}, {kills} kills, {workers} workers, {database_url.split(':')[0]}")
    db = make_engine(database_url)
    try:
        workspace = await make_workspace(db)
        campaign = await make_campaign(db, workspace, offer_url=OFFER + "{click_id}")
        server = Server(database_url, workdir, workers=workers)
        await asyncio.to_thread(server.start)
        run = Run(server, campaign.slug, workspace.postback_token, seed)
        try:
            # A failure in any task (a server that does not start again) cancels the others.
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(run.killer(kills, say))
                for _ in range(CLICKERS):
                    tasks.create_task(run.clicker())
                for _ in range(POSTBACKERS):
                    tasks.create_task(run.postbacker())
            await run.resend_unacknowledged()
        finally:
            server.kill()
        return await check(
            db, run.traffic, seed=seed, kills=kills, seconds=time.monotonic() - started
        )
    finally:
        await db.dispose()


async def check(
    db: AsyncEngine, traffic: Traffic, *, seed: int, kills: int, seconds: float
) -> Report:
    async with db.connect() as conn:
        stored_clicks = set((await conn.scalars(select(clicks.c.id))).all())
        counts = (
            await conn.execute(
                select(conversions.c.txid, conversions.c.click_id, func.count()).group_by(
                    conversions.c.txid, conversions.c.click_id
                )
            )
        ).all()
        rollups_off = await conn.run_sync(_rollups_off)
    per_txid: dict[str | None, int] = {}
    on_its_click: set[str] = set()
    for txid, click_id, count in counts:
        per_txid[txid] = per_txid.get(txid, 0) + count
        if txid is not None and count == 1 and traffic.txids.get(txid) == click_id:
            on_its_click.add(txid)
    return Report(
        seed=seed,
        kills=kills,
        clicks_sent=traffic.clicks_sent,
        click_answers=traffic.click_answers,
        clicks_acknowledged=len(set(traffic.clicks)),
        clicks_stored=len(stored_clicks.intersection(traffic.clicks)),
        clicks_in_database=len(stored_clicks),
        postbacks_sent=traffic.postbacks_sent,
        postback_answers=traffic.postback_answers,
        postbacks_answered_2xx=traffic.postbacks_answered_2xx,
        txids_sent=len(traffic.txids),
        postbacks_acknowledged=len(traffic.acknowledged),
        postbacks_stored=sum(
            1 for txid in traffic.acknowledged if per_txid.get(txid) == 1 and txid in on_its_click
        ),
        conversions_in_database=sum(per_txid.values()),
        duplicates=sum(count - 1 for count in per_txid.values()),
        rollups_off=rollups_off,
        seconds=seconds,
    )


def _rollups_off(conn: Connection) -> int:
    """The hourly sums (by campaign, and by campaign and sub1) that differ from the clicks."""
    c = clicks.c
    rows: Counter[tuple[int, str, str]] = Counter()
    for created_at, campaign_id, sub1 in conn.execute(select(c.created_at, c.campaign_id, c.sub1)):
        rows[(int(created_at.timestamp()) // 3600, campaign_id, sub1 or "")] += 1
    by_campaign: Counter[tuple[int, str]] = Counter()
    for (hour, campaign_id, _), n in rows.items():
        by_campaign[(hour, campaign_id)] += n
    h, s = click_hours.c, click_sub1_hours.c
    summed = Counter(
        {
            (hour, campaign_id): int(n)
            for hour, campaign_id, n in conn.execute(
                select(h.hour, h.campaign_id, func.sum(h.clicks)).group_by(h.hour, h.campaign_id)
            )
        }
    )
    summed_sub1 = Counter(
        {
            (hour, campaign_id, sub1 or ""): int(n)
            for hour, campaign_id, sub1, n in conn.execute(
                select(s.hour, s.campaign_id, s.sub1, func.sum(s.clicks)).group_by(
                    s.hour, s.campaign_id, s.sub1
                )
            )
        }
    )
    return len(set((summed - by_campaign) + (by_campaign - summed))) + len(
        set((summed_sub1 - rows) + (rows - summed_sub1))
    )
