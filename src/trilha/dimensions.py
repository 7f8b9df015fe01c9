"""The click's dimensions: the fields a query parameter, or a traffic source's mapping, can fill
(each one a column of the click), by family."""

from __future__ import annotations

SUBS = tuple(f"sub{n}" for n in range(1, 11))
UTMS = ("utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content")
CLICK_IDS = ("fbclid", "gclid", "ttclid")  # the ad networks' own click identifiers
AD_FIELDS = (
    "creative",
    "ad_id",
    "ad_name",
    "adset_id",
    "adset_name",
    "placement",
    "site_id",
    "keyword",
)
DIMENSIONS = AD_FIELDS + CLICK_IDS + UTMS + SUBS
