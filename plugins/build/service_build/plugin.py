"""Hook implementations of the build plugin (thin: the logic is in services, events and jobs)."""

from __future__ import annotations

from core import hookimpl
from core.records import Job, SettingsSection


@hookimpl
def register_settings():
    from service_build.config import SETTINGS_PREFIX, BuildConfig

    return [SettingsSection("build", BuildConfig, SETTINGS_PREFIX)]


@hookimpl
def register_blueprints():
    from service_build.resources import build_blp, job_queue_blp, public_blp
    from service_build.vertices import legacy_bp

    return [build_blp, public_blp, job_queue_blp, legacy_bp]


@hookimpl
def register_jobs():
    from service_build.jobs import build_flow
    from service_build.services import BUILD_JOB

    return [Job(BUILD_JOB, build_flow, "Build a flow, streaming its events")]


@hookimpl
def on_app_created(app):
    from service_build.config import init_app

    init_app(app)
