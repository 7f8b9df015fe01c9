"""The metrics of a report row, from its counts (pure).

Clicks count every click, bots too; rates per click use the clicks that are not bots. Sales are
conversions of an event type that counts as revenue that were approved (and stay counted when
refunded or charged back later: the refund is taken back apart); pending sales and their revenue
are shown apart, never as sales. Net revenue is what stays approved; of it, what is still inside
its hold period (trilha.hold) is on hold, the rest available.
Cost is added up in exact cost units (trilha.costs.units) and rounded only when shown; profit is
net revenue minus cost, ROI profit over cost, ROAS net revenue over cost, CPC cost per click that
is not a bot, CPA cost per sale (trilha.reports.costs says how cost reaches each row).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from decimal import ROUND_HALF_UP, Decimal
from typing import Final

from trilha.costs.units import EXTRA_DIGITS, from_cost_units, in_minor_units
from trilha.money import from_minor


@dataclass(slots=True)
class Counts:
    """What a report row adds up; money in the report currency's minor units, cost in its
    cost units."""

    clicks: int = 0
    unique_clicks: int = 0
    bot_clicks: int = 0
    leads: int = 0
    sales: int = 0
    pending_sales: int = 0
    approved_revenue: int = 0
    pending_revenue: int = 0
    refunds: int = 0
    refunded: int = 0
    chargebacks: int = 0
    charged_back: int = 0
    on_hold: int = 0  # approved revenue still inside its hold period
    cost: int = 0

    def add(self, other: Counts) -> None:
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def minus(self, other: Counts) -> Counts:
        """What is left of these counts without ``other``'s."""
        return Counts(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))


def _ratio(
    numerator: Decimal | int, denominator: Decimal | int, places: str = "0.0001"
) -> Decimal | None:
    if denominator == 0:
        return None
    return (Decimal(numerator) / denominator).quantize(Decimal(places), ROUND_HALF_UP)


def metrics(counts: Counts, currency: str) -> dict[str, int | Decimal | None]:
    """Every metric of a row: counts as they are, money as Decimal, rates None when undefined.

    >>> m = metrics(Counts(clicks=10, bot_clicks=2, sales=2, approved_revenue=19700), "BRL")
    >>> m["net_revenue"], m["cr"], m["epc"], m["aov"], m["roi"]
    (Decimal('197.00'), Decimal('0.2500'), Decimal('24.63'), Decimal('98.50'), None)
    >>> m = metrics(Counts(clicks=8, sales=2, approved_revenue=19700, cost=98_500000), "BRL")
    >>> [str(m[name]) for name in ("cost", "profit", "roi", "roas", "cpc", "cpa")]
    ['98.50', '98.50', '1.0000', '2.0000', '12.3125', '49.25']
    """
    net_minor = counts.approved_revenue - counts.refunded - counts.charged_back
    money = {
        "approved_revenue": counts.approved_revenue,
        "pending_revenue": counts.pending_revenue,
        "refunded": counts.refunded,
        "charged_back": counts.charged_back,
        "net_revenue": net_minor,
        "on_hold_revenue": counts.on_hold,
        "available_revenue": net_minor - counts.on_hold,
    }
    amounts = {name: from_minor(value, currency) for name, value in money.items()}
    net = amounts["net_revenue"]
    human = counts.clicks - counts.bot_clicks
    cost = from_cost_units(counts.cost, currency)
    return {
        **{f.name: getattr(counts, f.name) for f in fields(counts) if f.name != "on_hold"},
        **amounts,
        "cost": in_minor_units(counts.cost, currency),
        "profit": in_minor_units(money["net_revenue"] * 10**EXTRA_DIGITS - counts.cost, currency),
        "roi": _ratio(net - cost, cost) if cost else None,
        "roas": _ratio(net, cost) if cost else None,
        "cpc": _ratio(cost, human),
        "cpa": _ratio(cost, counts.sales, "0.01"),
        "cr": _ratio(counts.sales, human),
        "epc": _ratio(net, human, "0.01"),
        "epuc": _ratio(net, counts.unique_clicks, "0.01"),
        "aov": _ratio(amounts["approved_revenue"], counts.sales, "0.01"),
        "refund_rate": _ratio(counts.refunds + counts.chargebacks, counts.sales),
    }


METRIC_NAMES: Final = tuple(metrics(Counts(), "BRL"))

# How a metric reads: rates as a percentage, ROAS as a multiple; other Decimals are money.
PERCENTAGES: Final = frozenset({"cr", "refund_rate", "roi"})
MULTIPLES: Final = frozenset({"roas"})
SIGNED: Final = frozenset({"profit", "roi"})  # shown green above zero, red below
