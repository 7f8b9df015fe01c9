"""What a running trilha process holds: settings, the database engine and the click writer."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine

from trilha.click_writer import ClickWriter
from trilha.db.engine import make_engine
from trilha.settings import Settings
from trilha.visitors import CountryLookup


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    clicks: ClickWriter
    countries: CountryLookup = field(default_factory=CountryLookup)

    @classmethod
    def from_settings(cls, settings: Settings) -> Runtime:
        engine = make_engine(settings.database_url, sqlite_synchronous=settings.sqlite_synchronous)
        return cls(
            settings=settings,
            engine=engine,
            clicks=ClickWriter(engine),
            countries=CountryLookup(settings.geoip_database),
        )

    def start(self) -> None:
        self.clicks.start()

    async def stop(self) -> None:
        await self.clicks.stop()
        self.countries.close()
        await self.engine.dispose()
