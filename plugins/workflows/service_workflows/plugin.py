"""Hook implementations of the workflows plugin (thin: the logic is in services, streams, agui, jobs)."""

from __future__ import annotations

from core import hookimpl


@hookimpl
def register_blueprints():
    from service_workflows.resources import blp

    return [blp]


@hookimpl
def register_jobs():
    from service_workflows.jobs import JOBS

    return JOBS


@hookimpl
def register_run_shapers():
    from service_workflows.jobs import WorkflowShaper

    return [WorkflowShaper()]
