"""The build job: one flow build, its events appended to the job's stream."""

from __future__ import annotations

from typing import Any

from core.jobs import JobContext
from core.runs.jobs import end_job, job_emitter
from core.runs.wire import is_build_event
from service_build.services import BuildRequest, run_build


def build_flow(ctx: JobContext, **kwargs: Any) -> dict[str, Any]:
    """Run a build; the engine's ``end``/``error`` event closes the client stream.

    A failed flow is a finished job (its ``error`` event says why); a cancelled
    run ends the job ``cancelled`` (or failed, when the job's time limit was the
    reason), a paused one ``suspended`` (its end event is the ``suspended`` event).
    """
    req = BuildRequest(**kwargs)
    emit = job_emitter(ctx, keep=is_build_event)
    outcome = run_build(ctx.app, req, emit=emit, cancelled=ctx.cancelled, job_id=ctx.job_id)
    if outcome is None:
        return {"status": "invalid"}
    end_job(ctx, outcome)
    result = outcome.results[-1]
    return {"status": result.status, "build_duration": result.build_duration}
