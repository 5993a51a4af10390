"""Hook implementations of the run plugin (thin: the logic is in services, tweaks, validate, jobs)."""

from __future__ import annotations

from core import hookimpl
from core.records import Job

#: the hooks this plugin publishes: the model listing (the models bundle answers ``list_models``)
HOOKSPECS = "service_run.hookspecs"


@hookimpl
def register_blueprints():
    from service_run.resources import base_blp, hidden_bp, run_blp, webhook_blp

    return [run_blp, webhook_blp, base_blp, hidden_bp]


@hookimpl
def register_jobs():
    from service_run.jobs import WEBHOOK_JOB, run_webhook

    return [Job(WEBHOOK_JOB, run_webhook, "Run a flow with a webhook payload, as the flow's owner")]


@hookimpl
def register_settings():
    from core.records import SettingsSection
    from service_run.config import SETTINGS_NAME, SETTINGS_PREFIX, RunSettings

    return [SettingsSection(SETTINGS_NAME, RunSettings, SETTINGS_PREFIX)]


@hookimpl
def extend_config(actor, public):
    """``webhook_auth_enable`` and ``webhook_polling_interval`` of ``/api/v1/config``."""
    from service_run.config import settings

    cfg = settings()
    return {"webhook_auth_enable": cfg.webhook_auth_enable, "webhook_polling_interval": cfg.webhook_polling_interval}
