"""The build plugin's own settings (``SERVICE_BUILD_*``) and its per-app runtime.

The core's :class:`core.settings.Settings` has no room for plugin settings, so
these are read from the environment when the app is built (an unparsable
value stops start-up with :class:`core.errors.StartupError`, like a core
setting). The job backend's settings (``SERVICE_JOB_EVENT_TTL_SECONDS``,
``SERVICE_REDIS_URL``) come from the core.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.errors import StartupError

if TYPE_CHECKING:
    from flask import Flask

    from service_build.store import BuildStore

EXTENSION = "service.build"


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

    ENV = {
        "polling_timeout_seconds": "SERVICE_BUILD_POLLING_TIMEOUT_SECONDS",
        "poll_wait_seconds": "SERVICE_BUILD_POLL_WAIT_SECONDS",
        "stream_block_seconds": "SERVICE_BUILD_STREAM_BLOCK_SECONDS",
        "cache_ttl_seconds": "SERVICE_BUILD_CACHE_TTL_SECONDS",
        "cache_max_bytes": "SERVICE_BUILD_CACHE_MAX_BYTES",
    }

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None) -> BuildConfig:
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, var in cls.ENV.items():
            raw = env.get(var)
            if raw is None or raw.strip() == "":
                continue
            kind = type(getattr(cls, name))
            try:
                value = kind(raw.strip())
            except ValueError:
                raise StartupError(f"{var}: expected a number, got {raw!r}") from None
            if value <= 0:
                raise StartupError(f"{var}: must be positive, got {raw!r}")
            values[name] = value
        return cls(**values)

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
    from core.app import state
    from service_build.store import make_store

    config = BuildConfig.load()
    svc = state(app)
    rt = BuildRuntime(config=config, store=make_store(svc.settings, svc.jobs))
    app.extensions[EXTENSION] = rt
    return rt
