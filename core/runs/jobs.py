"""The one run job: every surface's background run is this job, parameterised by a named result shaper.

Its skeleton (:func:`run_job`): prepare the run (a JSON :class:`~core.runs.service.RunRequest`,
optionally with the flow the request already resolved, or a checkpoint to resume), release the
database connection, execute it with its typed events in the job's stream, end the job
(``cancelled`` / ``suspended``, :func:`end_job`) and return what the shaper makes of it
(:mod:`core.runs.shapers`). Its options, in the job's kwargs (:class:`RunJobArgs`):

* ``shaper``: the result shaper's name (``v1.run``, ``v1.webhook``, ``build.events``, ``v2.workflow``);
* ``events`` / ``prefix``: which run events the stream keeps, and a prefix of their names;
* ``hold_end``: the engine's ``end`` waits until the shaper's closing events are written;
* ``resume``: ``{checkpoint_id, answer, data}``, continue a suspended run from its checkpoint
  (a run that pauses ends its job ``suspended``, the checkpoint written by the run service);
* ``args``: the shaper's own JSON arguments.

Surfaces start it with :func:`enqueue` (a request) and :func:`resume` (an answered checkpoint),
under the job name they show (``runs.flow``, ``run.webhook``, ``build.flow``, ``workflows.run``,
...): each name is registered as :func:`job` (the same job; ``legacy`` translates the kwargs a
previous version queued under that name, so they still run after an upgrade).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import Flask

from core import appstate, db
from core.contracts import FlowRecord, RunQueued
from core.engine import RunEvent, Suspended
from core.engine.events import RunFailed, RunFinished
from core.engine.result_codec import decode_results
from core.errors import ApiError
from core.jobs import JobCancelled, JobContext, JobSuspended
from core.records import Job
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
    resolve,
    trace_context,
)
from core.runs.shapers import V1_RUN, RunShaper, ShapedRun, shaper

log = logging.getLogger(__name__)

RUN_JOB = "runs.flow"
RESUME_JOB = "runs.resume"

__all__ = [
    "RESUME_JOB",
    "RUN_JOB",
    "RunJob",
    "RunJobArgs",
    "end_job",
    "enqueue",
    "job",
    "job_emitter",
    "legacy_resume",
    "legacy_run",
    "restore",
    "resume",
    "run_job",
]


# --- the job's stream and ending ------------------------------------------------------------------
def job_emitter(
    ctx: JobContext, *, keep: Callable[[RunEvent], bool] | None = None, prefix: str = ""
) -> Callable[[RunEvent], None]:
    """An ``emit`` writing the events ``keep`` accepts to the job's stream (``prefix`` + name, payload).

    The ``suspended`` event is left out: a paused job ends with it (its end event).
    """

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


# --- the job --------------------------------------------------------------------------------------
@dataclass
class RunJobArgs:
    """The run job's kwargs (plain JSON: they travel to workers on other machines)."""

    shaper: str = V1_RUN
    request: dict[str, Any] | None = None
    #: the flow as the request resolved it (the job does not look it up again)
    flow: dict[str, Any] | None = None
    #: ``{checkpoint_id, answer, data}``: resume a suspended run instead of running ``request``
    resume: dict[str, Any] | None = None
    events: list[str] | None = None
    prefix: str = ""
    hold_end: bool = False
    args: dict[str, Any] = field(default_factory=dict)

    def kwargs(self) -> dict[str, Any]:
        """The job's kwargs, one level: every job queue copies its kwargs through JSON as it enqueues them
        (nothing is shared with the caller), so ``dataclasses.asdict``'s deep copy of the request and the
        flow's graph here was a second copy: two thirds of a webhook request's CPU (profiled)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def run_job(ctx: JobContext, **kwargs: Any) -> Any:
    """The run job (kwargs: :class:`RunJobArgs`)."""
    return _run(ctx, RunJobArgs(**kwargs))


def _run(ctx: JobContext, spec: RunJobArgs) -> Any:
    shape = shaper(ctx.app, spec.shaper)
    kept = None if spec.events is None else frozenset(spec.events)

    def keep(event: RunEvent) -> bool:
        return (kept is None or event.name in kept) and shape.keep(event)

    base = job_emitter(ctx, keep=keep, prefix=spec.prefix)
    held: list[RunEvent] = []
    # a shaper that keeps something once the run executed (the build's partial-build cache) has it kept
    # before its client reads the run's last event: a client that starts the next build on "end" or
    # "error" must find what this one kept (it did not, under load: a race the build tests lost)
    keeps = type(shape).ran is not RunShaper.ran
    terminal = (RunFinished, RunFailed) if keeps else (RunFinished,)

    def emit(event: RunEvent) -> None:
        if (spec.hold_end or keeps) and isinstance(event, terminal):
            held.append(event)
        else:
            base(event)

    run = ShapedRun(ctx, RunRequest.from_json((spec.resume or {}).get("data", {}).get("request") or spec.request or {}))
    run.args = dict(spec.args or {})
    run.emit = emit
    try:
        resumed = _prepare(run, spec)
    except ApiError as exc:
        refused = shape.refused(run, exc)
        for event in held:  # the refusal's own "error": nothing was kept
            base(event)
        return refused
    # end the lookup's read transaction: held for the whole run it would keep the embedded SQLite
    # default's one pooled connection from every other request of the process until the job ends
    db.release(ctx.app)
    assert run.prepared is not None
    run.outcome = execute(
        run.prepared,
        emit=emit,
        cancelled=ctx.cancelled,
        job_id=ctx.job_id,
        previous_results=shape.previous_results(run),
        resume=resumed,
        app=ctx.app,
    )
    shape.ran(run)
    if spec.hold_end:
        for name, data in shape.closing_events(run):
            ctx.emit(name, data)
    for event in held:
        base(event)
    end_job(ctx, run.outcome)
    return shape.result(run)


def _prepare(run: ShapedRun, spec: RunJobArgs) -> Resume | None:
    """Set ``run.prepared`` (built): the request's run, or the checkpointed one; the resume state, if any."""
    app = run.app
    if spec.resume is None:
        prepared = (
            PreparedRun(run.request, FlowRecord.from_dict(spec.flow))
            if spec.flow is not None
            else resolve(run.request, app)
        )
        run.prepared = build(prepared, app)
        return None
    return _from_checkpoint(run, spec.resume["checkpoint_id"], spec.resume.get("answer"), spec.resume["data"])


def _from_checkpoint(run: ShapedRun, checkpoint_id: str, answer: Any, data: dict[str, Any]) -> Resume:
    run.prepared, resumed = restore(checkpoint_id, answer, data, run.app)
    run.request = run.prepared.request
    run.resumed, run.checkpoint = True, data
    return resumed


def restore(
    checkpoint_id: str, answer: Any, data: dict[str, Any], app: Flask | None = None
) -> tuple[PreparedRun, Resume]:
    """A claimed checkpoint's run, rebuilt (``data``: what :func:`core.runs.checkpoints.claim` returned), and how it
    goes on: its results restored, the paused vertex built again with ``answer``.

    The flow is checked again (``check_run``: a policy or a revoked share stops a resume too), but the
    graph that runs is the one checkpointed, not the flow as edited since. The run job resumes through
    this; a surface may run the result in its request (``execute(prepared, resume=...)``).
    """
    req = RunRequest.from_json(data["request"])
    flow = FlowRecord.from_dict(data["flow"])
    hooks = appstate.hooks(app)
    if req.public and hooks.find_flow(user_id=None, flow_id_or_name=flow.id, public=True) is None:
        raise FlowNotFound(flow.id)  # the public grant was revoked since the run paused
    hooks.check_run(user_id=req.user_id, flow=flow, surface=req.surface)
    req.inputs = [RunInput(**data["input"])]
    req.tweaks = None  # already part of the checkpointed graph
    req.data = None
    req.run_id = None  # a resume is a new run (observers), not the paused one's id again
    prepared = build(PreparedRun(req, flow), app)
    results, inactive, _order = decode_results(data["results"])
    paused = {"request_id": checkpoint_id, "answer": answer, "state": data.get("state") or {}}
    return prepared, Resume(
        results=results,
        inactive=inactive,
        answers={str(data["vertex_id"]): paused},
        session_id=data.get("session_id"),
    )


class RunJob:
    """The run job under one of its names; ``legacy`` reads the kwargs an older version queued under it."""

    def __init__(self, legacy: Callable[[dict[str, Any]], RunJobArgs] | None = None, module: str = __name__) -> None:
        self.legacy = legacy
        #: what ``service worker`` imports before it forks (core.jobs.worker.preload): the surface's shaper module
        self.__module__ = module

    def __call__(self, ctx: JobContext, **kwargs: Any) -> Any:
        if "shaper" not in kwargs and self.legacy is not None:
            return _run(ctx, self.legacy(kwargs))
        return _run(ctx, RunJobArgs(**kwargs))


def job(
    name: str, description: str, legacy: Callable[[dict[str, Any]], RunJobArgs] | None = None, *, module: str = __name__
) -> Job:
    """The run job registered as ``name`` (a surface's ``register_jobs``): the name its jobs show.

    ``module``: the surface's module holding its shaper (``__name__``), imported by ``service worker``
    before it forks, as any job function's module.
    """
    return Job(name, RunJob(legacy, module), description)


def legacy_run(shaper_name: str, **options: Any) -> Callable[[dict[str, Any]], RunJobArgs]:
    """Old kwargs ``{request, events?, flow?, <shaper args>...}`` as the run job's arguments."""

    def translate(kwargs: dict[str, Any]) -> RunJobArgs:
        values = dict(kwargs)
        spec = RunJobArgs(shaper=shaper_name, request=values.pop("request"), **options)
        spec.flow = values.pop("flow", None)
        if "events" in values:
            spec.events = values.pop("events")
        spec.args = values
        return spec

    return translate


def legacy_resume(shaper_name: str) -> Callable[[dict[str, Any]], RunJobArgs]:
    """Old kwargs ``{checkpoint_id, answer, data}`` (a resume job) as the run job's arguments."""

    def translate(kwargs: dict[str, Any]) -> RunJobArgs:
        return RunJobArgs(shaper=shaper_name, resume=dict(kwargs))

    return translate


# --- starting it ----------------------------------------------------------------------------------
def enqueue(
    req: RunRequest,
    *,
    owner: str | None = None,
    meta: Mapping[str, Any] | None = None,
    job_id: str | None = None,
    events: list[str] | None = None,
    shaper: str = V1_RUN,
    job: str = RUN_JOB,
    flow: FlowRecord | None = None,
    prefix: str = "",
    hold_end: bool = False,
    args: Mapping[str, Any] | None = None,
    base_meta: bool = True,
    app: Flask | None = None,
) -> str:
    """Start the run job for ``req`` as job ``job``; its owner is ``owner`` (default: the request's user).

    ``job_id`` chooses the job's id (a surface that stores it with its own record before the job starts);
    ``events`` keeps only those run events in the job's stream (a surface that translates a few of them
    spares writing the big ``end_vertex`` payloads); ``flow`` is the flow the request resolved. The job's
    meta is ``meta`` over ``{flow_id, surface}`` (``base_meta=False``: ``meta`` only).
    """
    carried = trace_context(app)  # the worker's run continues the trace of the request that queued it
    if carried is not None:
        req = dataclasses.replace(req, trace_context=carried)
    hooks = appstate.hooks(app)
    queueing = hooks.queueing()
    if queueing and not req.run_id:  # the id the run will have, told now (``on_run_queued``)
        req = dataclasses.replace(req, run_id=str(uuid.uuid4()))
    spec = RunJobArgs(
        shaper=shaper,
        request=req.to_job_json(),
        flow=flow.as_dict() if flow is not None else None,
        events=events,
        prefix=prefix,
        hold_end=hold_end,
        args=dict(args or {}),
    )
    queued_at = time.time()
    queued = str(
        appstate.jobs(app).enqueue(
            job,
            owner=owner or str(req.user_id),
            job_id=job_id,
            kwargs=spec.kwargs(),
            meta={**({"flow_id": req.flow, "surface": req.surface} if base_meta else {}), **(meta or {})},
        )
    )
    if queueing:
        told = RunQueued(
            run_id=str(req.run_id),
            flow_id=str(flow.id if flow is not None else req.flow),
            flow_name=flow.name if flow is not None else req.flow_name,
            user_id=req.run_user_id,
            surface=req.surface,
            job_id=queued,
            queued_at=queued_at,
            request=spec.request or {},
        )
        try:
            hooks.on_run_queued(run=told)
        except Exception:  # the job is queued: a listener's failure never fails the request that queued it
            log.exception("a listener failed hearing that run %s was queued", req.run_id)
    return queued


def resume(
    checkpoint_id: str,
    owner: str,
    answer: Any,
    *,
    meta: Mapping[str, Any] | None = None,
    job: str = RESUME_JOB,
    shaper: str = V1_RUN,
    paused_job_id: str | None = None,
    app: Flask | None = None,
) -> str:
    """Answer the owner's pending checkpoint and resume its run as a new job (any process may run it).

    404 for a missing or foreign checkpoint, 409 when already answered, 410 when expired.
    Returns the id of the job that continues the run (its owner is the checkpoint's), run as job
    ``job`` with result shaper ``shaper``. The checkpoint records it (``resumed_job_id``), so the
    paused run's id leads to it (:func:`core.runs.resumes.current`); ``paused_job_id`` names the
    paused run when its checkpoint has no job of its own (a run paused in a request).
    """
    job_id = str(uuid.uuid4())
    data = checkpoints.claim(checkpoint_id, owner, job_id, paused_job_id=paused_job_id)
    spec = RunJobArgs(shaper=shaper, resume={"checkpoint_id": checkpoint_id, "answer": answer, "data": data})
    appstate.jobs(app).enqueue(
        job,
        owner=owner,
        job_id=job_id,
        kwargs=spec.kwargs(),
        meta={
            "flow_id": data["flow"]["id"],
            "resumes": checkpoint_id,
            "surface": data["request"]["surface"],
            **(meta or {}),
        },
    )
    return job_id
