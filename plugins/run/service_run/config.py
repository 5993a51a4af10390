"""The run plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them). Read with ``settings()``."""

from __future__ import annotations

from dataclasses import dataclass

from core.appstate import SettingsReader
from core.records import SettingsSection


@dataclass(frozen=True)
class RunSettings:
    #: ``POST /api/v1/webhook/{flow}`` needs an API key
    webhook_auth_enable: bool = True
    #: how often the editor polls for webhook runs (ms; 0: never), shown in ``/api/v1/config``
    webhook_polling_interval: int = 0


#: the section ``register_settings`` declares, and ``settings()``: the parsed one in force (typed)
SECTION = SettingsSection("run", RunSettings, "SERVICE_")
settings = SettingsReader(RunSettings)
