"""The build plugin's own settings (``SERVICE_BUILD_*``) and its per-app runtime.

The settings are a section contributed through ``register_settings`` and
parsed by the core like its own (an invalid value stops start-up naming the
variable). The job backend's settings (``SERVICE_JOB_EVENT_TTL_SECONDS``,
``SERVICE_REDIS_URL``) come from the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flask import Flask

    from service_build.store import BuildStore

EXTENSION = "service.build"
SETTINGS_PREFIX = "SERVICE_BUILD_"


@dataclass(frozen=True)
class BuildConfig:
    #: a ``polling`` build whose client has not polled (or streamed) for this long is cancelled
    polling_timeout_seconds: float = 60.0
    #: how long a poll waits for the next event when none is queued
    poll_wait_seconds: float = 5.0
    #: how long a streaming read blocks before it re-checks the job (and refreshes the activity mark)
    stream_block_seconds: float = 5.0
    #: lifetime of the per-user, per-flow cache of vertex results used by partial builds
    cache_ttl_seconds: int = 300
    #: largest cache entry kept (bytes of JSON); bigger results are simply not cached
    cache_max_bytes: int = 2_000_000

    @property
    def watchdog_interval(self) -> float:
        """How often the watchdog looks for abandoned builds (a quarter of the timeout, 0.2 s to 5 s)."""
        return max(0.2, min(5.0, self.polling_timeout_seconds / 4))


@dataclass
class BuildRuntime:
    """What the plugin keeps per app, at ``app.extensions["service.build"]``."""

    config: BuildConfig
    store: BuildStore


def runtime(app: Flask | None = None) -> BuildRuntime:
    from flask import current_app

    target = app if app is not None else current_app
    return target.extensions[EXTENSION]  # type: ignore[no-any-return]


def init_app(app: Flask) -> BuildRuntime:
    """Called from ``on_app_created``: settings and the event-side store matching the job backend."""
    from core import appstate
    from core.appstate import plugin_settings
    from service_build.store import make_store

    config: BuildConfig = plugin_settings("build", app)
    rt = BuildRuntime(config=config, store=make_store(appstate.settings(app), appstate.jobs(app), appstate.shared(app)))
    app.extensions[EXTENSION] = rt
    return rt
