"""The monitor plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them).

Declared through ``register_settings`` and parsed by the core like its own
(a bad value stops start-up naming the variable). Read with :func:`settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "monitor"
SETTINGS_PREFIX = "SERVICE_"


@dataclass(frozen=True)
class MonitorSettings:
    #: serve ``GET /logs`` and ``/logs-stream`` from an in-memory buffer of recent log lines
    enable_log_retrieval: bool = False
    log_retrieval_buffer_size: int = 10000

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {"log_retrieval_buffer_size": (1, None)}


def settings(app: Flask | None = None) -> MonitorSettings:
    """The monitor settings in force (typed)."""
    from core.appstate import settings_of

    return settings_of(MonitorSettings, app)
