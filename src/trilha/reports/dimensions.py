"""What a report can group by and filter on, and where each dimension lives (pure)."""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final


class Dimension(StrEnum):
    HOUR = "hour"
    DAY = "day"
    WEEK = "week"
    MONTH = "month"
    CAMPAIGN = "campaign"
    SOURCE = "source"
    CREATIVE = "creative"
    AD = "ad"
    ADSET = "adset"
    PLACEMENT = "placement"
    SUB1 = "sub1"
    SUB2 = "sub2"
    SUB3 = "sub3"
    SUB4 = "sub4"
    SUB5 = "sub5"
    SUB6 = "sub6"
    SUB7 = "sub7"
    SUB8 = "sub8"
    SUB9 = "sub9"
    SUB10 = "sub10"
    UTM_SOURCE = "utm_source"
    UTM_MEDIUM = "utm_medium"
    UTM_CAMPAIGN = "utm_campaign"
    UTM_TERM = "utm_term"
    UTM_CONTENT = "utm_content"
    COUNTRY = "country"
    DEVICE = "device"
    OS = "os"
    BROWSER = "browser"
    MERCHANT = "merchant"
    EVENT_TYPE = "event_type"
    STATUS = "status"


TIME: Final = frozenset({Dimension.HOUR, Dimension.DAY, Dimension.WEEK, Dimension.MONTH})
# The click column of each dimension a click has (campaign and source: the conversion's own).
CLICK_COLUMNS: Final[dict[Dimension, str]] = {
    Dimension.CAMPAIGN: "campaign_id",
    Dimension.SOURCE: "source_id",
    Dimension.CREATIVE: "creative",
    Dimension.AD: "ad_id",
    Dimension.ADSET: "adset_id",
    Dimension.PLACEMENT: "placement",
    **{d: d.value for d in Dimension if d.value.startswith(("sub", "utm_"))},
    Dimension.COUNTRY: "country",
    Dimension.DEVICE: "device_type",
    Dimension.OS: "os",
    Dimension.BROWSER: "browser",
}
# Dimensions only conversions have: clicks are not split by them.
CONVERSION_COLUMNS: Final[dict[Dimension, str]] = {
    Dimension.CAMPAIGN: "campaign_id",
    Dimension.SOURCE: "source_id",
    Dimension.MERCHANT: "merchant_id",
    Dimension.EVENT_TYPE: "event_type",
    Dimension.STATUS: "status",
}
# Dimensions the hourly rollups are keyed by (trilha.reports.rollups).
ROLLED_UP: Final = frozenset({Dimension.CAMPAIGN, Dimension.SOURCE, Dimension.SUB1})


def time_label(dimension: Dimension, local: datetime) -> str:
    """The bucket a local time falls in.

    >>> t = datetime(2026, 3, 5, 14, 30)
    >>> [time_label(d, t) for d in (Dimension.HOUR, Dimension.DAY, Dimension.WEEK, Dimension.MONTH)]
    ['2026-03-05 14:00', '2026-03-05', '2026-03-02', '2026-03']
    """
    if dimension is Dimension.HOUR:
        return local.strftime("%Y-%m-%d %H:00")
    if dimension is Dimension.DAY:
        return local.date().isoformat()
    if dimension is Dimension.WEEK:  # the week's Monday
        return (local.date() - timedelta(days=local.weekday())).isoformat()
    return local.strftime("%Y-%m")
