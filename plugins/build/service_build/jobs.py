"""The build job: one flow build, its events appended to the job's stream."""

from __future__ import annotations

from typing import Any

from core.jobs import JobCancelled, JobContext
from service_build.services import BuildRequest, run_build


def build_flow(ctx: JobContext, **kwargs: Any) -> dict[str, Any]:
    """Run a build; the engine's ``end``/``error`` event closes the client stream.

    A failed flow is a finished job (its ``error`` event says why); a cancelled
    run raises :class:`JobCancelled`, so the job ends ``cancelled`` (or failed,
    when the job's time limit was the reason).
    """
    req = BuildRequest(**kwargs)
    result = run_build(ctx.app, req, emit=ctx.emit, cancelled=ctx.cancelled, job_id=ctx.job_id)
    if result is None:
        return {"status": "invalid"}
    if result.status == "cancelled":
        raise JobCancelled(ctx.job_id)
    return {"status": result.status, "build_duration": result.build_duration}
