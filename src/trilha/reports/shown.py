"""A report's values as the reader's language writes them: on the dashboard and in the CSV it
hands out."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from trilha.i18n import Translator
from trilha.reports.dimensions import Dimension
from trilha.reports.metrics import MULTIPLES, PERCENTAGES


def row_label(t: Translator, dimension: Dimension, label: str) -> str:
    """A row's value; "" (clicks or sales without one) as "(none)"; statuses, devices and
    dates as this language writes them.

    >>> from trilha.i18n import translator
    >>> t = translator("pt-BR")
    >>> [row_label(t, d, v) for d, v in (
    ...     (Dimension.CAMPAIGN, ""), (Dimension.DEVICE, "mobile"), (Dimension.DAY, "2026-12-06"))]
    ['(nenhum)', 'Celular', '06/12/2026']
    """
    if label == "":
        return t("reports.none")
    if dimension is Dimension.STATUS:
        return t(f"conversion_status.{label}")
    if dimension is Dimension.DEVICE and f"device.{label}" in t.ui:
        return t(f"device.{label}")
    if dimension is Dimension.MONTH:
        return t.month(date.fromisoformat(f"{label}-01"))
    if dimension in (Dimension.DAY, Dimension.WEEK):
        return t.day(date.fromisoformat(label))
    if dimension is Dimension.HOUR:
        return f"{t.day(date.fromisoformat(label[:10]))} {label[11:]}"
    return label


def format_metric(t: Translator, name: str, value: int | Decimal | None, currency: str) -> str:
    """A metric as this language writes it.

    >>> from trilha.i18n import translator
    >>> t = translator("pt-BR")
    >>> [format_metric(t, n, v, "BRL") for n, v in (
    ...     ("clicks", 1234), ("cr", Decimal("0.0125")), ("epc", Decimal("2.5")), ("aov", None))]
    ['1.234', '1,25%', 'R$ 2,50', '—']
    """
    if value is None:
        return "—"
    if name in PERCENTAGES:
        return t.percent(Decimal(value))
    if name in MULTIPLES:
        return f"{t.number(Decimal(value), 2)}x"
    if isinstance(value, Decimal):
        return t.money(value, currency)
    return t.number(value, 0)
