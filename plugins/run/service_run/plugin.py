"""Hook implementations of the run plugin (thin: the logic is in services, tweaks, validate, jobs)."""

from __future__ import annotations

from core import hookimpl
from core.records import Job


@hookimpl
def register_blueprints():
    from service_run.resources import base_blp, hidden_bp, run_blp, webhook_blp

    return [run_blp, webhook_blp, base_blp, hidden_bp]


@hookimpl
def register_jobs():
    from service_run.jobs import WEBHOOK_JOB, run_webhook

    return [Job(WEBHOOK_JOB, run_webhook, "Run a flow with a webhook payload, as the flow's owner")]
