"""The run plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them).

Declared through ``register_settings`` and parsed by the core like its own
(a bad value stops start-up naming the variable). Read with :func:`settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "run"
SETTINGS_PREFIX = "SERVICE_"


@dataclass(frozen=True)
class RunSettings:
    #: ``POST /api/v1/webhook/{flow}`` needs an API key
    webhook_auth_enable: bool = True
    #: how often the editor polls for webhook runs (ms; 0: never), shown in ``/api/v1/config``
    webhook_polling_interval: int = 0


def settings(app: Flask | None = None) -> RunSettings:
    """The run settings in force (typed)."""
    from core.appstate import settings_of

    return settings_of(RunSettings, app)
