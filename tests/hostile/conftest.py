"""Hypothesis profiles: `ci` (the default) keeps the suite quick, `full` searches much longer.

    TRILHA_HYPOTHESIS_PROFILE=full .venv/bin/python -m pytest tests/hostile -q

No deadline in either: the machine's load must not fail a property.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "full", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("TRILHA_HYPOTHESIS_PROFILE", "ci"))
