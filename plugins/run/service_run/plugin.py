"""Hook implementations of the run plugin (thin: the logic is in services and jobs)."""

from __future__ import annotations

from core import hookimpl


@hookimpl
def register_blueprints():
    from service_run.resources import hidden_bp, run_blp, webhook_blp

    return [run_blp, webhook_blp, hidden_bp]


@hookimpl
def register_jobs():
    from service_run.jobs import JOB

    return [JOB]


@hookimpl
def register_run_shapers():
    from service_run.jobs import WebhookShaper

    return [WebhookShaper()]


@hookimpl
def register_settings():
    from service_run.config import SECTION

    return [SECTION]


@hookimpl
def extend_config(actor, public):
    """``webhook_auth_enable`` and ``webhook_polling_interval`` of ``/api/v1/config``."""
    from service_run.config import settings

    cfg = settings()
    return {"webhook_auth_enable": cfg.webhook_auth_enable, "webhook_polling_interval": cfg.webhook_polling_interval}
