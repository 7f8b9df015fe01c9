"""The big ad networks' parameter mappings, ready-made: offered when a traffic source is created.

Each row maps a query parameter of the tracking link to a click field, and says which of the
network's own macros to put in the ad's URL parameters so that the network fills it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from trilha.campaigns import ParamMapping


@dataclass(frozen=True, slots=True)
class NetworkParam:
    param: str
    field: str
    network_macro: str

    @property
    def mapping(self) -> ParamMapping:
        return ParamMapping(self.param, self.field)


@dataclass(frozen=True, slots=True)
class AdNetwork:
    name: str
    rows: tuple[NetworkParam, ...]

    @property
    def url_parameters(self) -> str:
        """What to paste into the network's "URL parameters" box.

        >>> AD_NETWORKS["google"].url_parameters.split("&")[0]
        'campaignid={campaignid}'
        """
        return "&".join(f"{row.param}={row.network_macro}" for row in self.rows)


AD_NETWORKS: Final[dict[str, AdNetwork]] = {
    "facebook": AdNetwork(
        "Facebook Ads",
        (
            NetworkParam("ad_id", "ad_id", "{{ad.id}}"),
            NetworkParam("ad_name", "ad_name", "{{ad.name}}"),
            NetworkParam("adset_id", "adset_id", "{{adset.id}}"),
            NetworkParam("adset_name", "adset_name", "{{adset.name}}"),
            NetworkParam("campaign_name", "utm_campaign", "{{campaign.name}}"),
            NetworkParam("placement", "placement", "{{placement}}"),
            NetworkParam("site_source", "site_id", "{{site_source_name}}"),
        ),
    ),
    "google": AdNetwork(
        "Google Ads",
        (
            NetworkParam("campaignid", "utm_campaign", "{campaignid}"),
            NetworkParam("adgroupid", "adset_id", "{adgroupid}"),
            NetworkParam("creative", "creative", "{creative}"),
            NetworkParam("keyword", "keyword", "{keyword}"),
            NetworkParam("placement", "placement", "{placement}"),
            NetworkParam("network", "site_id", "{network}"),
        ),
    ),
    "tiktok": AdNetwork(
        "TikTok Ads",
        (
            NetworkParam("campaign_name", "utm_campaign", "__CAMPAIGN_NAME__"),
            NetworkParam("adgroup_id", "adset_id", "__AID__"),
            NetworkParam("adgroup_name", "adset_name", "__AID_NAME__"),
            NetworkParam("ad_id", "ad_id", "__CID__"),
            NetworkParam("ad_name", "ad_name", "__CID_NAME__"),
            NetworkParam("placement", "placement", "__PLACEMENT__"),
        ),
    ),
}
