"""Hook implementations of the workflows plugin (thin: the logic is in services, streams, agui, jobs)."""

from __future__ import annotations

from core import hookimpl
from core.records import Job


@hookimpl
def register_blueprints():
    from service_workflows.resources import blp

    return [blp]


@hookimpl
def register_jobs():
    from service_workflows.jobs import RESUME_JOB, RUN_JOB, resume_workflow, run_workflow

    return [
        Job(RUN_JOB, run_workflow, "Run a flow in the background for the v2 workflows API"),
        Job(RESUME_JOB, resume_workflow, "Resume a paused v2 workflow run with its answer"),
    ]
