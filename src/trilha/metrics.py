"""The counters and histograms /metrics shows (Prometheus, through prometheus-client).

Every label takes its values from one of the product's closed sets (outcomes, platform presets,
destination kinds, writers, reports, refusal reasons): never a workspace, a slug or a token. The
series of the hot paths are made once, here, so that counting a click or a postback costs one
``inc`` and no look-up. With ``PROMETHEUS_MULTIPROC_DIR`` set in the environment before trilha
starts, every process writes its values to files there and /metrics adds them all up.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Final

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from trilha.conversions.outcome import Outcome
from trilha.deliveries.kinds import AttemptOutcome, Kind
from trilha.deliveries.outbox import Backlog
from trilha.postbacks.platforms import PRESETS

# A _created series beside each counter would double the output for a time no dashboard reads.
disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped upstream

NO_PLATFORM: Final = "none"  # the postback stopped before a merchant (and its preset) was known


class Writer(StrEnum):
    CLICK = "click"
    POSTBACK = "postback"


class LoginRefusal(StrEnum):
    CREDENTIALS = "credentials"  # unknown e-mail or wrong password
    LIMIT = "limit"  # too many failed sign-ins (trilha.login_limits)


CLICKS: Final = Counter("trilha_clicks", "Clicks recorded (each one a redirect to its offer).")

_POSTBACKS = Counter(
    "trilha_postbacks",
    "Postbacks received, by outcome and by the platform preset they were read with.",
    ["outcome", "platform"],
)
POSTBACKS: Final[Mapping[tuple[str, str], Counter]] = {
    (outcome, platform): _POSTBACKS.labels(outcome, platform)
    for outcome in Outcome
    for platform in (*PRESETS, NO_PLATFORM)
}

DELIVERY_ATTEMPTS: Final = Counter(
    "trilha_delivery_attempts",
    "Delivery attempts made, by outcome and destination kind.",
    ["outcome", "kind"],
)
for _outcome in AttemptOutcome:
    for _kind in Kind:
        DELIVERY_ATTEMPTS.labels(_outcome, _kind)

_BATCH_SIZE = Histogram(
    "trilha_group_commit_batch_size",
    "Jobs (clicks or postbacks) stored by each group commit.",
    ["writer"],
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000),
)
_COMMIT_SECONDS = Histogram(
    "trilha_group_commit_seconds",
    "Seconds each group commit took, its batch's statements and the commit together.",
    ["writer"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
BATCH_SIZE: Final = {writer: _BATCH_SIZE.labels(writer) for writer in Writer}
COMMIT_SECONDS: Final = {writer: _COMMIT_SECONDS.labels(writer) for writer in Writer}

REPORT_SECONDS: Final = Histogram(
    "trilha_report_seconds",
    "Seconds each report took, its wait for a turn included, by report.",
    ["report"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)

_LOGIN_REFUSALS = Counter("trilha_login_refusals", "Sign-ins refused, by reason.", ["reason"])
LOGIN_REFUSALS: Final = {reason: _LOGIN_REFUSALS.labels(reason) for reason in LoginRefusal}


def count_postback(outcome: Outcome, platform: str | None) -> None:
    """``platform``: a preset's name (PRESETS), or None."""
    key = (outcome, platform or NO_PLATFORM)
    counter = POSTBACKS.get(key)
    (counter or _POSTBACKS.labels(*key)).inc()


class _Outbox(Collector):
    """The outbox's gauges, as read for this scrape."""

    def __init__(self, outbox: Backlog) -> None:
        self._outbox = outbox

    def collect(self) -> Iterable[Metric]:
        yield GaugeMetricFamily(
            "trilha_outbox_depth",
            "Deliveries still to send, due or waiting for a retry.",
            value=self._outbox.depth,
        )
        yield GaugeMetricFamily(
            "trilha_outbox_oldest_age_seconds",
            "Age of the oldest delivery still to send, in seconds (0 when there is none).",
            value=self._outbox.oldest_age,
        )


def exposition(outbox: Backlog | None) -> bytes:
    """Every metric in Prometheus' text format: this process's, or with PROMETHEUS_MULTIPROC_DIR
    set, all processes' added up; then the outbox's, read once for all of them (none when the
    database did not answer)."""
    if "PROMETHEUS_MULTIPROC_DIR" in os.environ:
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # untyped upstream
    else:
        registry = REGISTRY
    if outbox is None:
        return generate_latest(registry)
    gauges = CollectorRegistry(auto_describe=False)
    gauges.register(_Outbox(outbox))
    return generate_latest(registry) + generate_latest(gauges)
