"""Ready-made parameter mappings for the big ad networks, offered when a traffic source is created.

Each row maps a query parameter of the tracking link to a click field, and says which of the
network's own macros to put in the ad's URL parameters so that the network fills it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from trilha.campaigns import ParamMapping


@dataclass(frozen=True, slots=True)
class PresetRow:
    param: str
    field: str
    network_macro: str

    @property
    def mapping(self) -> ParamMapping:
        return ParamMapping(self.param, self.field)


@dataclass(frozen=True, slots=True)
class SourcePreset:
    name: str
    rows: tuple[PresetRow, ...]

    @property
    def url_parameters(self) -> str:
        """What to paste into the network's "URL parameters" box.

        >>> SOURCE_PRESETS["google"].url_parameters.split("&")[0]
        'campaignid={campaignid}'
        """
        return "&".join(f"{row.param}={row.network_macro}" for row in self.rows)


SOURCE_PRESETS: Final[dict[str, SourcePreset]] = {
    "facebook": SourcePreset(
        "Facebook Ads",
        (
            PresetRow("ad_id", "ad_id", "{{ad.id}}"),
            PresetRow("ad_name", "ad_name", "{{ad.name}}"),
            PresetRow("adset_id", "adset_id", "{{adset.id}}"),
            PresetRow("adset_name", "adset_name", "{{adset.name}}"),
            PresetRow("campaign_name", "utm_campaign", "{{campaign.name}}"),
            PresetRow("placement", "placement", "{{placement}}"),
            PresetRow("site_source", "site_id", "{{site_source_name}}"),
        ),
    ),
    "google": SourcePreset(
        "Google Ads",
        (
            PresetRow("campaignid", "utm_campaign", "{campaignid}"),
            PresetRow("adgroupid", "adset_id", "{adgroupid}"),
            PresetRow("creative", "creative", "{creative}"),
            PresetRow("keyword", "keyword", "{keyword}"),
            PresetRow("placement", "placement", "{placement}"),
            PresetRow("network", "site_id", "{network}"),
        ),
    ),
    "tiktok": SourcePreset(
        "TikTok Ads",
        (
            PresetRow("campaign_name", "utm_campaign", "__CAMPAIGN_NAME__"),
            PresetRow("adgroup_id", "adset_id", "__AID__"),
            PresetRow("adgroup_name", "adset_name", "__AID_NAME__"),
            PresetRow("ad_id", "ad_id", "__CID__"),
            PresetRow("ad_name", "ad_name", "__CID_NAME__"),
            PresetRow("placement", "placement", "__PLACEMENT__"),
        ),
    ),
}
