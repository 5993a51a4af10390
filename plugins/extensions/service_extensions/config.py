"""The extensions plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them).

Declared through ``register_settings`` and parsed by the core like its own
(a bad value stops start-up naming the variable). Read with :func:`settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "extensions"
SETTINGS_PREFIX = "SERVICE_"


@dataclass(frozen=True)
class ExtensionsSettings:
    #: allow reloading bundles and switching plugins at run time (``/api/v1/extensions``)
    enable_extension_reload: bool = False


def settings(app: Flask | None = None) -> ExtensionsSettings:
    """The extensions settings in force (typed)."""
    from core.appstate import settings_of

    return settings_of(ExtensionsSettings, app)
