"""The sales-platform presets, one module each; PRESETS is the registry."""

from __future__ import annotations

from typing import Final

from trilha.postbacks.preset import Preset
from trilha.postbacks.presets import (
    braip,
    eduzz,
    generic,
    hotmart,
    kiwify,
    monetizze,
    perfectpay,
    ticto,
)

PRESETS: Final[dict[str, Preset]] = {
    preset.name: preset
    for preset in (
        generic.PRESET,
        hotmart.PRESET,
        kiwify.PRESET,
        monetizze.PRESET,
        braip.PRESET,
        eduzz.PRESET,
        perfectpay.PRESET,
        ticto.PRESET,
    )
}
