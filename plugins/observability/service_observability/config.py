"""The observability plugin's settings (``SERVICE_<FIELD>``); OpenTelemetry reads the standard ``OTEL_*``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "observability"
SETTINGS_PREFIX = "SERVICE_"


@dataclass(frozen=True)
class ObservabilitySettings:
    #: serve Prometheus metrics at ``GET /metrics`` (superusers, or a bearer ``SERVICE_METRICS_TOKEN``)
    metrics_enabled: bool = False
    #: a scrape token: ``Authorization: Bearer <token>`` reads ``/metrics`` without a user
    metrics_token: str = ""
    #: where every process writes its samples (``PROMETHEUS_MULTIPROC_DIR`` wins; default ``<config dir>/metrics``)
    metrics_multiproc_dir: str = ""
    #: store each run's trace (``GET /api/v1/monitor/traces``); false: nothing is stored
    native_tracing: bool = True
    #: traces older than this many days are pruned (now and then, by the process that writes)
    native_tracing_retention_days: int = 30

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {"native_tracing_retention_days": (1, None)}


def settings(app: Flask | None = None) -> ObservabilitySettings:
    from core.appstate import settings_of

    return settings_of(ObservabilitySettings, app)
