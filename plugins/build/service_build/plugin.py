"""Hook implementations of the build plugin (thin: the logic is in services, events and jobs)."""

from __future__ import annotations

from collections.abc import Mapping

from core import hookimpl
from core.records import SettingsSection


@hookimpl
def register_settings():
    from service_build.config import SETTINGS_PREFIX, BuildConfig

    return [SettingsSection("build", BuildConfig, SETTINGS_PREFIX)]


@hookimpl
def register_blueprints():
    from service_build.resources import build_blp, public_blp
    from service_build.vertices import legacy_bp

    return [build_blp, public_blp, legacy_bp]


@hookimpl
def register_jobs():
    from service_build.jobs import JOB

    return [JOB]


@hookimpl
def register_run_shapers():
    from service_build.jobs import BuildShaper

    return [BuildShaper()]


@hookimpl
def on_app_created(app):
    from service_build.config import init_app

    init_app(app)


@hookimpl(optionalhook=True)
def job_queue_metrics() -> Mapping[str, object] | None:
    """The build counters of ``GET /api/v1/monitor/job_queue`` (a hook the monitor plugin publishes)."""
    from service_build.config import runtime

    counters = runtime().store.counters()
    return {
        "builds_started": counters.get("builds_started", 0),
        "polling_watchdog_kills": counters.get("polling_watchdog_kills", 0),
    }
