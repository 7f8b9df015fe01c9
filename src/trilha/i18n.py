"""The dashboard's two languages: JSON catalogs in trilha/locale/ and which one a request gets.

A catalog has ``ui`` (key -> text, ``{name}`` filled from keyword arguments) and ``errors``
(the domain's English error messages -> translation). Numbers and quoted values in an error
message stand as ``#`` in its key, so "must be at most 120 characters" finds
"must be at most # characters"; so do macros named in braces and the list of paths after
"(looked in: ".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from zoneinfo import ZoneInfo

from babel.dates import format_skeleton
from babel.numbers import format_currency, format_decimal, format_percent

from trilha.accounts import LOCALES

DEFAULT_LOCALE = "pt-BR"
CATALOG_DIR = Path(__file__).parent / "locale"
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
# Macros named (``{clikid}, {x}``), a number, a quoted value, or the list of paths a reason
# says it looked in.
VARIABLE = re.compile(r"\{\w+\}(?:, \{\w+\})*|\d+|'[^']*'|(?<=\(looked in: )[^)]*")
# A conversion's status change in a reason: its two statuses are translated as statuses are.
STATUS_CHANGE = re.compile(r"\b([a-z]+) → ([a-z]+)\b")


@dataclass(frozen=True, slots=True)
class Translator:
    locale: str
    ui: Mapping[str, str]
    errors: Mapping[str, str]

    def __call__(self, key: str, **params: object) -> str:
        """The text for ``key`` (the key itself when missing), ``{name}`` filled from params;
        with a ``count`` or ``n`` of exactly 1, the key's singular (``key.one``) where the
        catalog has one: "0 entregas", "1 entrega", as Brazilians write them (CLDR's
        Portuguese rule would make 0 singular too).

        >>> Translator("en", {"hi": "Hi {name}, {click_id}"}, {})("hi", name="Ana")
        'Hi Ana, {click_id}'
        >>> t = Translator("pt-BR", {"q": "{count} entregas", "q.one": "{count} entrega"}, {})
        >>> t("q", count=1), t("q", count=0), t("q", count="2"), t("q", count="1")
        ('1 entrega', '0 entregas', '2 entregas', '1 entrega')
        """
        text = self.ui.get(key, key)
        amount = params.get("count", params.get("n"))
        if amount in (1, "1") and not isinstance(amount, bool):  # a flash keeps it as text
            text = self.ui.get(f"{key}.one", text)
        if not params:
            return text
        return PLACEHOLDER.sub(lambda m: str(params.get(m.group(1), m.group(0))), text)

    def error(self, message: str) -> str:
        """A domain error message in this language, part by part where it joins several with
        "; " (a part the catalog lacks stays as it is).

        >>> t = Translator("pt-BR", {}, {
        ...     "must be at most # characters": "no máximo # caracteres",
        ...     "unknown event type #; add it under event types": "tipo # desconhecido; crie-o"})
        >>> t.error("must be at most 120 characters")
        'no máximo 120 caracteres'
        >>> t.error("unknown event type 'X'; add it under event types; no amount")
        "tipo 'X' desconhecido; crie-o; no amount"
        """
        parts = message.split("; ")
        translated, start = [], 0
        while start < len(parts):
            for end in range(len(parts), start, -1):
                text = self._one_error("; ".join(parts[start:end]))
                if text is not None:
                    break
            else:
                end, text = start + 1, parts[start]
            translated.append(text)
            start = end
        return "; ".join(translated)

    def _one_error(self, message: str) -> str | None:
        """The catalog's translation of one message; a status change's statuses translated.

        >>> translator("pt-BR").error("illegal status change approved → pending; ignored")
        'mudança de status não permitida: Aprovada → Pendente; ignorada'
        """
        template = self.errors.get(VARIABLE.sub("#", message))
        if template is not None:
            values = iter(VARIABLE.findall(message))
            return re.sub("#", lambda _: next(values, "#"), template)
        change = STATUS_CHANGE.search(message)
        if change is None:
            return None
        template = self.errors.get(STATUS_CHANGE.sub("# → #", message, count=1))
        if template is None:
            return None
        names = iter(
            self.ui.get(f"conversion_status.{status}", status) for status in change.groups()
        )
        return re.sub("#", lambda _: next(names, "#"), template)

    @property
    def _cldr(self) -> str:
        return self.locale.replace("-", "_")

    def number(self, value: Decimal | float, digits: int) -> str:
        """A number with thousands grouped, as this language writes it (Babel, CLDR).

        >>> translator("pt-BR").number(Decimal("1234.5"), 2), translator("en").number(1.25, 1)
        ('1.234,50', '1.2')
        """
        pattern = "#,##0" + ("." + "0" * digits if digits else "")
        return format_decimal(value, format=pattern, locale=self._cldr)

    def money(self, amount: Decimal | str, currency: str) -> str:
        """An amount with its currency's symbol and minor digits, the sign before the symbol
        in Portuguese (``-R$ 40,17``); a plain space after the symbol, so the text copies as
        it reads.

        >>> t, en = translator("pt-BR"), translator("en")
        >>> t.money(Decimal("1234.5"), "BRL"), t.money(Decimal("-40.17"), "BRL")
        ('R$ 1.234,50', '-R$ 40,17')
        >>> t.money(Decimal("12.5"), "USD"), en.money(Decimal("500"), "JPY")
        ('US$ 12,50', '¥500')
        """
        text = format_currency(Decimal(amount), currency, locale=self._cldr)
        return text.replace("\xa0", " ")

    def amount(self, value: Decimal | str) -> str:
        """An exact amount without a currency, its cents always shown and finer digits kept.

        >>> translator("pt-BR").amount("1234.5"), translator("pt-BR").amount(Decimal("0.0125"))
        ('1.234,50', '0,0125')
        """
        return format_decimal(Decimal(value), format="#,##0.00##########", locale=self._cldr)

    def percent(self, fraction: Decimal) -> str:
        """A rate as a percentage with two decimals.

        >>> translator("pt-BR").percent(Decimal("0.0125")), translator("en").percent(Decimal("1.5"))
        ('1,25%', '150.00%')
        """
        return format_percent(fraction, format="#,##0.00%", locale=self._cldr)

    def day(self, day: date) -> str:
        """A day as this language writes it: 06/12/2026, or 12/6/2026 in English."""
        return format_skeleton(
            "yMd", datetime(day.year, day.month, day.day, tzinfo=UTC), locale=self._cldr
        )

    def month(self, first_day: date) -> str:
        """A month: dez. de 2026, or Dec 2026 in English."""
        moment = datetime(first_day.year, first_day.month, 1, tzinfo=UTC)
        return format_skeleton("yMMM", moment, locale=self._cldr)

    def logged_amount(self, value: str | None, currency: str) -> str:
        """A postback log's value: money when it was read as one, else as it was sent.

        >>> t = translator("pt-BR")
        >>> [t.logged_amount(value, "BRL") for value in ("97.00", "x", None)]
        ['R$ 97,00', 'x', '—']
        """
        if not value:
            return "—"
        try:
            return self.money(Decimal(value), currency)
        except InvalidOperation:
            return value

    def when(self, moment: datetime, timezone: str) -> str:
        """A moment on a workspace's clock, day first in Portuguese."""
        pattern = "%d/%m/%Y %H:%M:%S" if self.locale == "pt-BR" else "%Y-%m-%d %H:%M:%S"
        return moment.astimezone(ZoneInfo(timezone)).strftime(pattern)


@cache
def translator(locale: str) -> Translator:
    locale = locale if locale in LOCALES else DEFAULT_LOCALE
    catalog = json.loads((CATALOG_DIR / f"{locale}.json").read_text(encoding="utf-8"))
    return Translator(locale, catalog["ui"], catalog["errors"])


def negotiate_locale(accept_language: str | None) -> str:
    """The supported locale a browser prefers, from its Accept-Language header.

    >>> negotiate_locale("en-US,en;q=0.9,pt;q=0.8"), negotiate_locale("fr, pt-PT;q=0.5")
    ('en', 'pt-BR')
    """
    ranked: list[tuple[float, str]] = []
    for part in (accept_language or "").split(","):
        tag, _, quality = part.strip().partition(";q=")
        try:
            ranked.append((float(quality) if quality else 1.0, tag.strip().lower()))
        except ValueError:
            continue
    for _, tag in sorted(ranked, key=lambda item: -item[0]):
        if tag.startswith("pt"):
            return "pt-BR"
        if tag.startswith("en"):
            return "en"
    return DEFAULT_LOCALE
