"""The monitor plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them). Read with ``settings()``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.appstate import SettingsReader
from core.records import SettingsSection


@dataclass(frozen=True)
class MonitorSettings:
    #: serve ``GET /logs`` and ``/logs-stream`` from an in-memory buffer of recent log lines
    enable_log_retrieval: bool = False
    log_retrieval_buffer_size: int = 10000

    BOUNDS: ClassVar[dict[str, tuple[int, int | None]]] = {"log_retrieval_buffer_size": (1, None)}


#: the section ``register_settings`` declares, and ``settings()``: the parsed one in force (typed)
SECTION = SettingsSection("monitor", MonitorSettings, "SERVICE_")
settings = SettingsReader(MonitorSettings)
