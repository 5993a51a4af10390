"""The extensions plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them). Read with ``settings()``."""

from __future__ import annotations

from dataclasses import dataclass

from core.appstate import SettingsReader
from core.records import SettingsSection


@dataclass(frozen=True)
class ExtensionsSettings:
    #: allow reloading bundles and switching plugins at run time (``/api/v1/extensions``)
    enable_extension_reload: bool = False


#: the section ``register_settings`` declares, and ``settings()``: the parsed one in force (typed)
SECTION = SettingsSection("extensions", ExtensionsSettings, "SERVICE_")
settings = SettingsReader(ExtensionsSettings)
