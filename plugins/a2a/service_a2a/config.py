"""The A2A plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them).

Declared through ``register_settings`` and parsed by the core like its own
(a bad value stops start-up naming the variable). Read with :func:`settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "a2a"
SETTINGS_PREFIX = "SERVICE_"


@dataclass(frozen=True)
class A2ASettings:
    #: serve the A2A endpoints (``/api/v1/a2a/...``); off answers 404
    a2a_enabled: bool = False


def settings(app: Flask | None = None) -> A2ASettings:
    """The A2A settings in force (typed)."""
    from core.appstate import settings_of

    return settings_of(A2ASettings, app)
