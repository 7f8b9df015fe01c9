"""The sales platforms, one module each: where the platform puts a postback's fields and what
its events mean (its preset), how it signs, what its settings need, and a sample delivery shaped
like its real requests. PRESETS and SAMPLES are the registries, keyed by platform name."""

from __future__ import annotations

from typing import Final

from trilha.postbacks.platforms import (
    braip,
    cakto,
    doppus,
    eduzz,
    eduzz_v3,
    generic,
    greenn,
    hotmart,
    hubla,
    kirvano,
    kiwify,
    lastlink,
    monetizze,
    payt,
    perfectpay,
    ticto,
)
from trilha.postbacks.preset import Preset
from trilha.postbacks.sample import Sample

_PLATFORMS = (
    generic,
    hotmart,
    kiwify,
    monetizze,
    braip,
    eduzz,
    eduzz_v3,
    perfectpay,
    ticto,
    greenn,
    cakto,
    kirvano,
    hubla,
    lastlink,
    payt,
    doppus,
)

PRESETS: Final[dict[str, Preset]] = {module.PRESET.name: module.PRESET for module in _PLATFORMS}
SAMPLES: Final[dict[str, Sample]] = {module.PRESET.name: module.SAMPLE for module in _PLATFORMS}
