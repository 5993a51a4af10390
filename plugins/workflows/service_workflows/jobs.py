"""Background v2 runs: jobs built on the run service whose result is the v2 (sync-shaped) response.

* ``workflows.run``: :func:`core.runs.jobs.run_request`, the run's events into the job's stream
  (the engine's ``end`` held back until the ``output`` events are written, as the reference
  frames them), result :func:`service_workflows.services.response`;
* ``workflows.resume``: :func:`core.runs.jobs.resume_run` for ``POST /api/v2/workflows/{job_id}/resume``.

A cancelled or paused run ends the job ``cancelled`` / ``suspended`` (core.runs.jobs.end_job).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core import db
from core.engine import RunEvent
from core.engine.events import RunFinished
from core.jobs import JobContext
from core.runs import RunRequest, build, execute, resolve
from core.runs.jobs import end_job, job_emitter, resume_run
from service_workflows import services

RUN_JOB = "workflows.run"
RESUME_JOB = "workflows.resume"


def _emitter(ctx: JobContext) -> tuple[Callable[[RunEvent], None], Callable[[Any, list[str] | None], None]]:
    """An ``emit`` that holds the run's ``end`` back, and the ``close`` that writes outputs, then ``end``."""
    emit = job_emitter(ctx)
    held: list[RunEvent] = []

    def on_event(event: RunEvent) -> None:
        if isinstance(event, RunFinished):
            held.append(event)
        else:
            emit(event)

    def close(outcome: Any, output_ids: list[str] | None) -> None:
        for item in services.output_events(outcome, output_ids):
            ctx.emit("output", item)
        for event in held:
            emit(event)

    return on_event, close


def run_workflow(
    ctx: JobContext, request: dict[str, Any], output_ids: list[str] | None = None, globals_: Any = None
) -> dict[str, Any]:
    """Job ``workflows.run``: run the request as its owner; the result is the v2 response."""
    req = RunRequest.from_json(request)
    prepared = build(resolve(req, ctx.app), ctx.app)
    db.release(ctx.app)  # the run may be long: give the connection back (messages open their own)
    on_event, close = _emitter(ctx)
    outcome = execute(prepared, emit=on_event, cancelled=ctx.cancelled, job_id=ctx.job_id, app=ctx.app)
    close(outcome, output_ids)
    end_job(ctx, outcome)
    return services.response(
        outcome,
        flow_id=prepared.flow.id,
        session_id=req.session_id,
        job_id=ctx.job_id,
        output_ids=output_ids,
        globals_=globals_,
        public=req.public,
    )


def resume_workflow(ctx: JobContext, checkpoint_id: str, answer: Any, data: dict[str, Any]) -> dict[str, Any]:
    """Job ``workflows.resume``: continue a paused run with the answer; the result is the v2 response."""
    req, outcome = resume_run(ctx, checkpoint_id, answer, data)
    return services.response(
        outcome,
        flow_id=str(data["flow"]["id"]),
        session_id=data.get("session_id") or req.session_id,
        job_id=ctx.job_id,
        public=req.public,
    )
