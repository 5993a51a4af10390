"""The flows plugin's settings (``SERVICE_<FIELD>``, names as the spec gives them).

Declared through ``register_settings`` and parsed by the core like its own
(a bad value stops start-up naming the variable). Read with :func:`settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

SETTINGS_NAME = "flows"
SETTINGS_PREFIX = "SERVICE_"


@dataclass(frozen=True)
class FlowsSettings:
    #: strip API keys from flows when they are saved or exported
    remove_api_keys: bool = False
    #: name of the project that holds a user's first flows
    default_folder_name: str = "Starter Project"
    #: seconds between sweeps of expired public (shared playground) data
    public_flow_cleanup_interval: int = 3600


def settings(app: Flask | None = None) -> FlowsSettings:
    """The flows settings in force (typed)."""
    from core.app import settings_of

    return settings_of(FlowsSettings, app)
