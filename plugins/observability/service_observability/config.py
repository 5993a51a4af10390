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

    #: a price table for usage cost: JSON ``{"<model>": [<input price>, <output price>]}`` per million tokens
    token_prices: str = ""

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {"native_tracing_retention_days": (1, None)}


def settings(app: Flask | None = None) -> ObservabilitySettings:
    from core.appstate import settings_of

    return settings_of(ObservabilitySettings, app)


def parse_prices(raw: str) -> dict[str, tuple[float, float]]:
    """``SERVICE_TOKEN_PRICES`` read; ``ValueError`` naming what is wrong."""
    import json

    if not raw.strip():
        return {}
    try:
        table = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"SERVICE_TOKEN_PRICES is not JSON: {exc.msg}") from None
    if not isinstance(table, dict):
        raise ValueError("SERVICE_TOKEN_PRICES must be an object of model names")
    prices: dict[str, tuple[float, float]] = {}
    for model, pair in table.items():
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and p >= 0 for p in pair)
        ):
            raise ValueError(f"SERVICE_TOKEN_PRICES[{model!r}] must be [input price, output price] per million tokens")
        prices[str(model)] = (float(pair[0]), float(pair[1]))
    return prices
