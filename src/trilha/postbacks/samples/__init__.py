"""Sample deliveries, one module per preset, shaped like the platform's real requests.

Each puts the merchant's secret where the platform does (Kiwify: an HMAC-SHA1 signature of the
body), so a test postback passes the checks a real one must. Field names follow docs/platforms;
Braip's are unverified, like its preset. SAMPLES is the registry, keyed like PRESETS.
"""

from __future__ import annotations

from typing import Final

from trilha.postbacks.sample import Sample
from trilha.postbacks.samples import (
    braip,
    eduzz,
    generic,
    hotmart,
    kiwify,
    monetizze,
    perfectpay,
    ticto,
)

SAMPLES: Final[dict[str, Sample]] = {
    "generic": generic.SAMPLE,
    "hotmart": hotmart.SAMPLE,
    "kiwify": kiwify.SAMPLE,
    "monetizze": monetizze.SAMPLE,
    "braip": braip.SAMPLE,
    "eduzz": eduzz.SAMPLE,
    "perfectpay": perfectpay.SAMPLE,
    "ticto": ticto.SAMPLE,
}
