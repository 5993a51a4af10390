"""Runs as jobs: what every surface's background run shares, and the core's two run jobs.

* :func:`job_emitter` writes a run's typed events to the job's stream as
  ``(name, payload)`` pairs; the ``suspended`` event is left out, because a
  paused job ends with it (its end event, see :data:`core.jobs.END_EVENTS`).
* :func:`end_job` turns a cancelled or paused outcome into the job's ending
  (:class:`~core.jobs.JobCancelled`, :class:`~core.jobs.JobSuspended`).
* ``runs.flow`` runs a :class:`~core.runs.service.RunRequest` in the background
  (its result: the simplified run response); ``runs.resume`` resumes a
  checkpoint with an answer. :func:`enqueue` and :func:`resume` start them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask

from core import db
from core.app import state
from core.contracts import FlowRecord
from core.engine import RunEvent, Suspended, simplified_run_response
from core.engine.checkpoint import decode_results
from core.jobs import JobCancelled, JobContext, JobSuspended
from core.runs import checkpoints
from core.runs.service import (
    FlowNotFound,
    PreparedRun,
    Resume,
    RunInput,
    RunOutcome,
    RunRequest,
    build,
    execute,
    failure_text,
    resolve,
)

RUN_JOB = "runs.flow"
RESUME_JOB = "runs.resume"

__all__ = [
    "RESUME_JOB",
    "RUN_JOB",
    "end_job",
    "enqueue",
    "job_emitter",
    "resume",
    "resume_run",
    "run_request",
]


def job_emitter(
    ctx: JobContext, *, keep: Callable[[RunEvent], bool] | None = None, prefix: str = ""
) -> Callable[[RunEvent], None]:
    """An ``emit`` writing the events ``keep`` accepts to the job's stream (``prefix`` + name, payload)."""

    def emit(event: RunEvent) -> None:
        if isinstance(event, Suspended) or (keep is not None and not keep(event)):
            return
        ctx.emit(prefix + event.name, event.payload())

    return emit


def end_job(ctx: JobContext, outcome: RunOutcome) -> None:
    """Raise the job ending of a cancelled or paused run (returns for completed and failed runs)."""
    if outcome.suspended is not None:
        raise JobSuspended(dict(outcome.suspended))
    if outcome.failed is not None and outcome.failed.status == "cancelled":
        raise JobCancelled(ctx.job_id)


def _response(outcome: RunOutcome, req: RunRequest) -> dict[str, Any]:
    first = req.inputs[0] if req.inputs else RunInput()
    return simplified_run_response(outcome.results[-1], input_value=first.value)


def run_request(
    ctx: JobContext, request: dict[str, Any], events: list[str] | None = None
) -> tuple[RunRequest, RunOutcome]:
    """Run a JSON :class:`RunRequest` in a job (events into its stream); raise the job ending of a
    cancelled or paused run. For surfaces whose job result has their own shape.

    ``events`` names the run events the job's stream keeps (None: all of them).
    """
    req = RunRequest.from_json(request)
    prepared = build(resolve(req, ctx.app), ctx.app)
    # end the lookup's read transaction: held for the whole run it would keep the embedded SQLite
    # default's one pooled connection from every other request of the process until the job ends
    db.session().close()
    keep = None if events is None else frozenset(events)
    emit = job_emitter(ctx, keep=None if keep is None else (lambda event: event.name in keep))
    outcome = execute(prepared, emit=emit, cancelled=ctx.cancelled, job_id=ctx.job_id, app=ctx.app)
    end_job(ctx, outcome)
    return req, outcome


def run_flow_job(ctx: JobContext, request: dict[str, Any], events: list[str] | None = None) -> dict[str, Any]:
    """Job ``runs.flow``: run the request as its owner; a failing component fails the job, naming it.

    ``events`` names the run events the job's stream keeps (None: all of them).
    """
    req, outcome = run_request(ctx, request, events)
    if outcome.failed is not None:
        raise RuntimeError(failure_text(outcome.failed))
    return _response(outcome, req)


def enqueue(
    req: RunRequest,
    *,
    owner: str | None = None,
    meta: dict[str, Any] | None = None,
    job_id: str | None = None,
    events: list[str] | None = None,
    app: Flask | None = None,
) -> str:
    """Start ``runs.flow`` for ``req``; the job's owner is ``owner`` (default: the request's user).

    ``job_id`` chooses the job's id (a surface that stores it with its own record before the job starts);
    ``events`` keeps only those run events in the job's stream (a surface that translates a few of them
    spares writing the big ``end_vertex`` payloads).
    """
    return str(
        state(app).jobs.enqueue(
            RUN_JOB,
            owner=owner or str(req.user_id),
            job_id=job_id,
            kwargs={"request": req.to_json()} if events is None else {"request": req.to_json(), "events": events},
            meta={"flow_id": req.flow, "surface": req.surface, **(meta or {})},
        )
    )


# --- resuming -----------------------------------------------------------------------------------------
def resume(
    checkpoint_id: str,
    owner: str,
    answer: Any,
    *,
    meta: dict[str, Any] | None = None,
    job: str = RESUME_JOB,
    app: Flask | None = None,
) -> str:
    """Answer the owner's pending checkpoint and resume its run as a new job (any process may run it).

    404 for a missing or foreign checkpoint, 409 when already answered, 410 when expired.
    Returns the id of the job that continues the run (its owner is the checkpoint's). ``job``
    names the job that continues it (``runs.resume``, or a surface's job built on
    :func:`resume_run` whose result has the surface's shape); it is called with
    ``checkpoint_id``, ``answer`` and ``data``.
    """
    import uuid

    job_id = str(uuid.uuid4())
    data = checkpoints.claim(checkpoint_id, owner, job_id)
    state(app).jobs.enqueue(
        job,
        owner=owner,
        job_id=job_id,
        kwargs={"checkpoint_id": checkpoint_id, "answer": answer, "data": data},
        meta={
            "flow_id": data["flow"]["id"],
            "resumes": checkpoint_id,
            "surface": data["request"]["surface"],
            **(meta or {}),
        },
    )
    return job_id


def resume_job(ctx: JobContext, checkpoint_id: str, answer: Any, data: dict[str, Any]) -> dict[str, Any]:
    """Job ``runs.resume``: :func:`resume_run`, answered with the simplified run response."""
    req, outcome = resume_run(ctx, checkpoint_id, answer, data)
    if outcome.failed is not None:
        raise RuntimeError(failure_text(outcome.failed))
    return _response(outcome, req)


def resume_run(ctx: JobContext, checkpoint_id: str, answer: Any, data: dict[str, Any]) -> tuple[RunRequest, RunOutcome]:
    """Rebuild the checkpointed graph, restore its results and build on from the paused vertex.

    The flow is checked again (``check_run``: a policy or a revoked share stops a resume too), but the
    graph that ran is the one checkpointed, not the flow as edited since. Raises the job ending of a
    cancelled or paused run.
    """
    req = RunRequest.from_json(data["request"])
    flow = FlowRecord.from_dict(data["flow"])
    hooks = state(ctx.app).host.hooks
    if req.public and hooks.find_flow(user_id=None, flow_id_or_name=flow.id, public=True) is None:
        raise FlowNotFound(flow.id)  # the public grant was revoked since the run paused
    hooks.check_run(user_id=req.user_id, flow=flow, surface=req.surface)
    item = RunInput(**data["input"])
    req.inputs = [item]
    req.tweaks = None  # already part of the checkpointed graph
    req.data = None
    prepared = PreparedRun(req, flow)
    build(prepared, ctx.app)
    results, inactive, _order = decode_results(data["results"])
    outcome = execute(
        prepared,
        emit=job_emitter(ctx),
        cancelled=ctx.cancelled,
        job_id=ctx.job_id,
        resume=Resume(
            results=results,
            inactive=inactive,
            answers={
                str(data["vertex_id"]): {
                    "request_id": checkpoint_id,
                    "answer": answer,
                    "state": data.get("state") or {},
                }
            },
            session_id=data.get("session_id"),
        ),
        app=ctx.app,
    )
    end_job(ctx, outcome)
    return req, outcome
