"""The time zones a form offers: Brazil's first, then the rest by region, each named by its city
in the reader's language with its current offset, "(UTC\N{MINUS SIGN}03:00) São Paulo".

Only the canonical zones are listed (CLDR's aliases such as "Brazil/East" or
"America/Buenos_Aires" are left out); any valid zone is still accepted, and a workspace kept on
an alias shows it selected (see partials/timezone_select.html).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache, lru_cache
from typing import Final
from zoneinfo import ZoneInfo

from babel.core import get_global
from babel.dates import get_timezone_location

from trilha.i18n import translator
from trilha.validation import TIMEZONES

BRAZIL: Final = "BR"
FIRST: Final = "America/Sao_Paulo"  # where most workspaces are; first of Brazil's zones
FIXED: Final = "fixed"  # UTC and the Etc/GMT±N zones: a group of their own


@dataclass(frozen=True, slots=True)
class ZoneChoices:
    """Groups of (zone, label) options, in order; ``zone in choices`` says if it is listed."""

    groups: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]

    def __contains__(self, zone: object) -> bool:
        return any(zone == value for _, options in self.groups for value, _ in options)


def zone_choices(locale: str, now: datetime) -> ZoneChoices:
    """The zones to offer, with the offsets they have at ``now`` (those of the hour, so a
    daylight saving change shows within the hour).

    >>> from datetime import UTC
    >>> choices = zone_choices("pt-BR", datetime(2026, 12, 6, 12, tzinfo=UTC))
    >>> brazil, first_option = choices.groups[0][0], choices.groups[0][1][0]
    >>> brazil, first_option, "America/Manaus" in choices, "Brazil/East" in choices
    ('Brasil', ('America/Sao_Paulo', '(UTC\N{MINUS SIGN}03:00) São Paulo'), True, False)
    >>> [name for name, _ in choices.groups][1:4]
    ['África', 'América', 'Antártida']
    """
    return _choices(locale, now.replace(minute=0, second=0, microsecond=0))


@lru_cache(maxsize=8)
def _choices(locale: str, hour: datetime) -> ZoneChoices:
    t = translator(locale)
    grouped: dict[str, list[tuple[timedelta, str, str]]] = {}
    for zone, region, city in _places(t.locale):
        offset = ZoneInfo(zone).utcoffset(hour) or timedelta(0)
        grouped.setdefault(region, []).append((offset, zone, f"({utc_offset(offset)}) {city}"))
    brazil = sorted(grouped.pop(BRAZIL), key=lambda o: (o[1] != FIRST, -o[0], o[2]))
    fixed = sorted(grouped.pop(FIXED), key=lambda o: (o[0], o[1] != "UTC", o[2]))
    groups = [
        (t("zone_region.brazil"), brazil),
        *(
            (t(f"zone_region.{region.lower()}"), sorted(grouped[region], key=_by_offset))
            for region in sorted(grouped)
        ),
        (t("zone_region.fixed"), fixed),
    ]
    return ZoneChoices(
        tuple(
            (name, tuple((zone, label) for _, zone, label in options)) for name, options in groups
        )
    )


def _by_offset(option: tuple[timedelta, str, str]) -> tuple[timedelta, str]:
    return option[0], option[2]


@cache
def _places(locale: str) -> tuple[tuple[str, str, str], ...]:
    """Each listed zone, its group (BRAZIL, FIXED or its IANA region) and its city's name."""
    aliases, territories = get_global("zone_aliases"), get_global("zone_territories")
    places = []
    for zone in TIMEZONES:
        if zone in aliases or ("/" not in zone and zone != "UTC"):
            continue
        region = zone.split("/")[0]
        if zone == "UTC" or region == "Etc":
            places.append((zone, FIXED, zone))
            continue
        city = get_timezone_location(zone, locale.replace("-", "_"), return_city=True)
        places.append((zone, BRAZIL if territories.get(zone) == BRAZIL else region, city))
    return tuple(places)


def utc_offset(offset: timedelta) -> str:
    """An offset as people read it, with a true minus sign.

    >>> utc_offset(timedelta(hours=-3)), utc_offset(timedelta(hours=5, minutes=30))
    ('UTC\N{MINUS SIGN}03:00', 'UTC+05:30')
    """
    minutes = int(offset.total_seconds()) // 60
    sign = "\N{MINUS SIGN}" if minutes < 0 else "+"
    hours, minutes = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02}:{minutes:02}"
