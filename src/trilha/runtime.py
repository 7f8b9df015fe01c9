"""What a running trilha process holds: settings, the database engine, the click writer, the
reports' turns and the background upkeep."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from functools import cached_property

from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.click_writer import ClickWriter
from trilha.db.engine import is_sqlite, make_engine, reading
from trilha.deliveries.worker import DeliveryWorker
from trilha.group_commit import BlockingWriter
from trilha.maintenance import run_maintenance
from trilha.postbacks.writer import PostbackWriter
from trilha.reports.limits import ReportLimiter
from trilha.settings import Settings
from trilha.visitors import CountryLookup, TrustedProxies

log = logging.getLogger(__name__)


def database_engine(settings: Settings) -> AsyncEngine:
    """The engine on TRILHA_DATABASE_URL, its pool as the settings size it."""
    return make_engine(
        settings.database_url,
        sqlite_synchronous=settings.sqlite_synchronous,
        pooler=settings.database_pooler,
        pool_size=settings.database_pool_size,
        max_overflow=settings.database_pool_overflow,
    )


def reports_engine(settings: Settings) -> AsyncEngine | None:
    """The engine on TRILHA_REPORTS_DATABASE_URL, a replica (pooled, when at all, as the
    database is), or None when reports read from the database itself."""
    if settings.reports_database_url is None:
        return None
    return make_engine(
        settings.reports_database_url,
        pooler=settings.database_pooler,
        pool_size=settings.database_pool_size,
        max_overflow=settings.database_pool_overflow,
    )


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    clicks: ClickWriter
    postbacks: PostbackWriter
    writer: BlockingWriter  # clicks' (and on SQLite postbacks')
    postback_writer: BlockingWriter  # the same on SQLite, which has one write lock
    deliveries: DeliveryWorker | None  # None when TRILHA_DELIVERY_WORKER is off
    reports: ReportLimiter
    reports_engine: AsyncEngine | None = None  # TRILHA_REPORTS_DATABASE_URL's, when set
    countries: CountryLookup = field(default_factory=CountryLookup)
    _upkeep: asyncio.Task[None] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Runtime:
        engine = database_engine(settings)
        writer = BlockingWriter(engine)
        postback_writer = writer if is_sqlite(engine) else BlockingWriter(engine)
        deliveries = DeliveryWorker(engine, settings) if settings.delivery_worker else None
        replica = reports_engine(settings)
        return cls(
            settings=settings,
            engine=engine,
            clicks=ClickWriter(writer),
            # A committed batch may hold new deliveries: the worker looks at once.
            postbacks=PostbackWriter(
                postback_writer, on_commit=deliveries.wake if deliveries else None
            ),
            writer=writer,
            postback_writer=postback_writer,
            deliveries=deliveries,
            reports=ReportLimiter(
                at_once=settings.reports_at_once,
                queue_wait=settings.report_queue_wait,
                time_limit=settings.report_timeout,
                engine=replica,
            ),
            reports_engine=replica,
            countries=CountryLookup(settings.geoip_database),
        )

    @cached_property
    def proxies(self) -> TrustedProxies:
        """The trusted proxies, read once for the hot paths."""
        return TrustedProxies(self.settings.trusted_proxies)

    @cached_property
    def read_engine(self) -> AsyncEngine:
        """The engine for transactions that only read (on SQLite: no write lock)."""
        return reading(self.engine)

    @property
    def _writers(self) -> list[BlockingWriter]:
        return list(dict.fromkeys((self.writer, self.postback_writer)))

    def start(self) -> None:
        for writer in self._writers:
            writer.start()
        self.clicks.start()
        self.postbacks.start()
        self._upkeep = asyncio.create_task(run_maintenance(self.engine, self.settings))
        if self.deliveries is not None:
            self.deliveries.start()
        loop = type(asyncio.get_running_loop()).__module__.split(".")[0]
        log.info("serving: %s database, %s event loop", self.engine.dialect.name, loop)
        if self.reports_engine is not None:
            shown = self.reports_engine.url.render_as_string(hide_password=True)
            log.info("reports read from the replica at %s", shown)

    async def stop(self) -> None:
        if self._upkeep is not None:
            self._upkeep.cancel()
            await asyncio.gather(self._upkeep, return_exceptions=True)
        if self.deliveries is not None:
            await self.deliveries.stop()
        await self.clicks.stop()
        await self.postbacks.stop()
        for writer in self._writers:
            await writer.stop()
        self.countries.close()
        await self.engine.dispose()
        if self.reports_engine is not None:
            await self.reports_engine.dispose()
