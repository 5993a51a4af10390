"""The A2A plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them). Read with ``settings()``."""

from __future__ import annotations

from dataclasses import dataclass

from core.appstate import SettingsReader
from core.records import SettingsSection


@dataclass(frozen=True)
class A2ASettings:
    #: serve the A2A endpoints (``/api/v1/a2a/...``); off answers 404
    a2a_enabled: bool = False


#: the section ``register_settings`` declares, and ``settings()``: the parsed one in force (typed)
SECTION = SettingsSection("a2a", A2ASettings, "SERVICE_")
settings = SettingsReader(A2ASettings)
