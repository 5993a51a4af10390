"""A2A tasks: a row that maps the task to its run, and a state read from the job store.

A task is a row of ``a2a_task`` (so ``tasks/get`` works on any process): its id, agent,
owner, context id, the user message that started it (``history``) and the id of the job
that runs it. Streamed and non-blocking tasks are a ``runs.flow`` job of the core run job;
their state is the job's (:func:`view`; the row keeps only the ending, once the job has ended):

=========================  ==================================================
job (``core.jobs``)        A2A task state
=========================  ==================================================
queued                     submitted
running                    working
finished                   completed (the answer: the run response's last message)
failed                     failed (the reason, for the owner's key only)
cancelled, or cancel asked canceled
suspended                  input-required (what the flow asks, its checkpoint)
gone (expired) before it   failed: "Task interrupted: its run is gone" (an ended job left its ending in the row)
=========================  ==================================================

A blocking ``message/send`` runs in the request (:func:`run_blocking`, no job): it has no
job to read, so its row is written once with its ending. Answering an ``input-required``
task (:func:`resume`) resumes its checkpoint as a ``runs.resume`` job, and the row then
points to that job. :func:`follow` translates the job's stream into the task's A2A events.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import sqlalchemy as sa

from core import appstate, db, groupcommit, runs
from core.contracts import FlowRecord
from core.engine import RunResult
from core.engine import events as run_events
from core.engine.lazy import lazy_import
from core.engine.results import last_chat_text
from core.errors import ApiError
from core.jobs import JobInfo, JobState
from core.runs import checkpoints
from core.runs import jobs as run_jobs
from service_a2a.models import Task
from service_a2a.services import (
    FAILED_TEXT,
    TERMINAL,
    Access,
    answer_of,
    input_text,
    message_text,
    session_for,
    uuid_of,
)

if TYPE_CHECKING:
    from a2a.compat.v0_3 import types as v03
else:  # the A2A SDK's models (about 0.2 s) on the first A2A request, not at start-up
    v03 = lazy_import("a2a.compat.v0_3.types")

log = logging.getLogger(__name__)

#: how long a blocked read of the job's stream waits before it looks at the job again
READ_BLOCK_SECONDS = 5.0
GONE_TEXT = "Task interrupted: its run is gone (the server restarted)"
CANCELED_TEXT = "Task canceled"
#: the task state of each job state (a job asked to cancel is ``canceled`` already)
STATE_OF_JOB = {
    JobState.QUEUED: "submitted",
    JobState.RUNNING: "working",
    JobState.FINISHED: "completed",
    JobState.FAILED: "failed",
    JobState.CANCELLED: "canceled",
    JobState.SUSPENDED: "input-required",
}

# --- rows ---------------------------------------------------------------------------------------------
#: a task row inserted as a Core table statement, built once (the ORM's unit of work cost more than the write)
_INSERT = sa.insert(cast(sa.Table, Task.__table__))
#: the blocking send's insert on the driver (core.db.Prepared): through the session it cost 0.4 ms
_TASK_INSERT = db.Prepared(_INSERT, column_keys=[c.key for c in Task.__table__.columns])

#: the run events a task's job keeps in its stream (what :func:`follow` translates)
JOB_EVENTS = ["vertex_start", "token", "error"]


@dataclass
class NewTask:
    """A task as the caller sees it (the columns of :class:`Task`, without the ORM's instrumentation).

    Made for a new task (``stored``: inserted already, a streamed or non-blocking task; a blocking
    ``message/send`` inserts it once, ended), or by :func:`view` from a row and its job's state.
    """

    id: uuid.UUID
    flow_id: uuid.UUID
    owner_id: uuid.UUID
    context_id: str
    public: bool
    request: dict[str, Any]
    created_at: dt.datetime
    updated_at: dt.datetime
    job_id: str | None = None
    state: str = "submitted"
    status_text: str | None = None
    answer: str | None = None
    checkpoint_id: str | None = None
    input_request: dict[str, Any] | None = None
    stored: bool = False


#: a task as read from the database, or made in this request
Row = Task | NewTask


def _columns(row: Row) -> dict[str, Any]:
    return {c.key: getattr(row, c.key) for c in Task.__table__.columns}


def _new_task(access: Access, message: v03.Message) -> tuple[NewTask, runs.RunRequest]:
    """A task for a new user message (not stored yet) and the run request it makes."""
    text = message_text(message)
    context_id = message.context_id or str(uuid.uuid4())
    task_id = uuid.uuid4()
    stored = message.model_dump(mode="json", by_alias=True, exclude_none=True)
    stored["contextId"] = context_id
    stored["taskId"] = str(task_id)
    now = db.utcnow()
    row = NewTask(
        id=task_id,
        flow_id=uuid_of(access.flow_id),
        owner_id=uuid_of(access.owner_id),
        context_id=context_id,
        public=access.public,
        request=stored,
        created_at=now,
        updated_at=now,
    )
    return row, access.run_request(text, session_for(access.flow_id, context_id))


def get(flow_id: str, task_id: str) -> Task | None:
    """The task ``task_id`` of agent ``flow_id`` (a task of another flow is not found)."""
    try:
        key = uuid.UUID(str(task_id))
    except ValueError:
        return None
    row = db.session().get(Task, key)
    return row if row is not None and str(row.flow_id) == str(flow_id) else None


def failure_text(row: Row, error: str | None) -> str:
    """A failed task's message: the reason for the owner's key, only "Flow execution failed" for the public."""
    if row.public or not error:
        return FAILED_TEXT
    return f"{FAILED_TEXT}: {error}"


def delete_user_rows(user_id: str) -> None:
    try:
        owner = uuid.UUID(str(user_id))
    except ValueError:
        return
    with db.transaction() as s:
        s.execute(sa.delete(Task).where(Task.__table__.c.owner_id == owner))


# --- the state: the job's -----------------------------------------------------------------------------
def _ended(
    row: NewTask,
    new_state: str,
    *,
    answer: str | None = None,
    status_text: str | None = None,
    checkpoint_id: str | None = None,
    input_request: dict[str, Any] | None = None,
) -> NewTask:
    """Set a task's state and what goes with it (on the object only)."""
    row.state = new_state
    row.answer = answer
    row.status_text = status_text
    row.checkpoint_id = checkpoint_id
    row.input_request = input_request
    row.updated_at = db.utcnow()
    return row


def _paused(row: NewTask, paused: Mapping[str, Any]) -> NewTask:
    """A run that paused for human input: ``input-required`` with the request in its status."""
    request = dict(paused.get("request") or {})
    return _ended(
        row,
        "input-required",
        status_text=input_text(request),
        checkpoint_id=str(paused.get("checkpoint_id") or paused.get("request_id")),
        input_request=request,
    )


def _stamp(epoch: float | None) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch, dt.UTC) if epoch else db.utcnow()


def from_job(row: Row, info: JobInfo | None) -> NewTask:
    """The task ``row`` in the state of its job ``info`` (see the module's table)."""
    task = NewTask(**_columns(row), stored=True)
    if info is None:  # expired, or lost with the server: an ending an older version recorded, else interrupted
        return task if row.state in TERMINAL else _ended(task, "failed", status_text=GONE_TEXT)
    task.answer = task.status_text = task.checkpoint_id = task.input_request = None
    task.updated_at = _stamp(info.ended_at or info.started_at or info.created_at)
    task.state = "canceled" if info.cancel_requested else STATE_OF_JOB[info.state]
    if task.state == "canceled":
        task.status_text = CANCELED_TEXT
    elif task.state == "completed":
        task.answer = answer_of(info.result)
    elif task.state == "failed":
        task.status_text = failure_text(row, info.error)
    elif task.state == "input-required":
        updated = task.updated_at
        _paused(task, info.result if isinstance(info.result, Mapping) else {})
        task.updated_at = updated
    return task


def view(row: Row) -> Row:
    """The task as it is now: a task with a job in its job's state; one without (a blocking send) as stored.

    A job that has ended leaves its ending in the row, once: the job store forgets a job after
    ``SERVICE_JOB_EVENT_TTL_SECONDS``, a task is kept until its owner goes, and ``tasks/get`` must
    still answer ``completed`` with its artifact then. The row never follows the job while it runs.
    """
    if not row.job_id:
        return row
    info = appstate.jobs().info(row.job_id)
    task = from_job(row, info)
    if info is not None and info.ended_at is not None and task.state != "input-required" and row.state != task.state:
        _archive(task, row.job_id)
    return task


def _archive(task: NewTask, job_id: str) -> None:
    """Write an ended job's task state into its row (only while the row still points to that job)."""
    table = cast(sa.Table, Task.__table__)
    with db.transaction() as s:
        s.execute(
            sa.update(table)
            .where(table.c.id == task.id, table.c.job_id == job_id)
            .values(state=task.state, answer=task.answer, status_text=task.status_text, updated_at=task.updated_at)
        )


# --- starting -----------------------------------------------------------------------------------------
def start(access: Access, message: v03.Message) -> Row:
    """Store the task and start its run as a job (``runs.flow``, owned by the caller's principal).

    For streamed and non-blocking tasks, whose caller learns the task id before the run ends.
    """
    row, req = _new_task(access, message)
    row.job_id = str(uuid.uuid4())
    with db.transaction() as s:
        s.execute(_INSERT, [_columns(row)])
    row.stored = True
    # the job looks the flow up and asks check_run: a refusal is a failed task, as any flow failure
    run_jobs.enqueue(req, owner=access.job_owner, job_id=row.job_id, events=JOB_EVENTS, meta={"a2a_task": str(row.id)})
    return row


def run_blocking(access: Access, message: v03.Message, flow: FlowRecord | None = None) -> Row:
    """A blocking ``message/send``: the run in this request (``core.runs`` execute), the task stored once, ended.

    Its caller learns the task id only from the answer, so nobody can ask for it earlier; the row
    is written with its final state in the run's own commit (``execute(on_result=)``: the insert
    joins the transaction that stores the run's messages), before the answer leaves, so
    ``tasks/get`` then works on any process. No job, no event stream: the run's events are not
    needed for a single answer.
    """
    row, req = _new_task(access, message)
    try:
        # 404 / 403 / 422 of the run service: a failed task, as in a job. The agent read for this request
        # is the run's flow (an owner's run; a public one is looked up through its grant again)
        prepared = runs.prepare(req, found=flow)
    except ApiError as exc:
        return _insert_ended(row, "failed", status_text=failure_text(row, _detail(exc)))
    # the lookup's connection stays with this request through the run, as in every in-request run of the run
    # service (the simplified run too): releasing it here cost a second checkout (a ping on PostgreSQL)
    written = False

    def on_result(result: RunResult) -> None:
        nonlocal written
        if result.status == "suspended":  # the row needs the checkpoint, written after this: stored below
            return
        if result.ok:
            _ended(row, "completed", answer=last_chat_text(result))
        else:
            _ended(row, "failed", status_text=failure_text(row, runs.failure_text(result)))
        # written with the run's messages, in their commit (core.groupcommit: in a group with the runs that end
        # now, on the driver): no session begun for one insert (bench/NOTES.md, issue 14)
        groupcommit.defer(appstate.engine(), _TASK_INSERT, [_columns(row)])
        row.stored = written = True

    try:
        outcome = runs.execute(prepared, on_result=on_result)
    except Exception:
        log.exception("A2A task %s of flow %s failed", row.id, access.flow_id)
        groupcommit.discard()  # not written yet, or written with the messages before the failure
        db.session().rollback()
        stored = db.session().get(Task, row.id) if written else None  # committed before the failure
        row.stored = False
        return stored or _insert_ended(row, "failed", status_text=failure_text(row, None))
    if written:
        groupcommit.flush(appstate.engine())  # no message to store: nothing committed the row yet
        return row
    return _finish_outcome(row, outcome)


def _finish_outcome(row: NewTask, outcome: runs.RunOutcome) -> Row:
    """Write the end of an in-request run: completed, failed, or waiting for input (its checkpoint)."""
    if outcome.suspended is not None:
        _paused(row, outcome.suspended)
        return _insert_ended(row, row.state, **_ending(row))
    if outcome.failed is not None:
        return _insert_ended(row, "failed", status_text=failure_text(row, runs.failure_text(outcome.failed)))
    return _insert_ended(row, "completed", answer=last_chat_text(outcome.results[-1]))


def _ending(row: NewTask) -> dict[str, Any]:
    return {
        "answer": row.answer,
        "status_text": row.status_text,
        "checkpoint_id": row.checkpoint_id,
        "input_request": row.input_request,
    }


def _insert_ended(row: NewTask, new_state: str, **ending: Any) -> NewTask:
    """Insert the row of a task that ran in the request (no job), with its ending."""
    _ended(row, new_state, **ending)
    with db.transaction() as s:  # a Core insert: the ORM's unit of work cost more than the write
        s.execute(_INSERT, [_columns(row)])
    row.stored = True
    return row


def _detail(exc: ApiError) -> str:
    return exc.detail if isinstance(exc.detail, str) else "the run was refused"


# --- answering, cancelling ----------------------------------------------------------------------------
class NotWaiting(Exception):
    """A message for a task that is not waiting for input (or an answer that lost the race)."""


class TaskNotCancelable(Exception):
    pass


def resume(row: Row, access: Access, message: v03.Message, *, inline: bool = False) -> Row:
    """Answer an ``input-required`` task: its checkpoint resumed through ``core.runs``.

    The message's text is the answer. The checkpoint is claimed exactly once (a second answer
    fails). ``inline`` (a blocking send): the run goes on in this request and the row records its
    ending, as for a new blocking send; otherwise as a ``runs.resume`` job, which the row then
    points to and whose state the task shows.
    """
    task = view(row)
    if task.state != "input-required" or not task.checkpoint_id:
        raise NotWaiting(f"Task {task.id} is {task.state}, not waiting for input")
    if message.context_id and message.context_id != task.context_id:
        raise NotWaiting(f"Task {task.id} belongs to another context")
    answer = message_text(message)
    if inline:
        return _resume_here(task, access, answer)
    db.release()
    try:
        job_id = run_jobs.resume(task.checkpoint_id, access.job_owner, answer, meta={"a2a_task": str(task.id)})
    except ApiError as exc:  # 404 foreign or missing, 409 already answered, 410 expired
        raise NotWaiting(_detail(exc)) from None
    resumed = _point(task, job_id=job_id, state="submitted")  # the task now maps to the resume job
    db.release()  # the caller follows the job next: the job needs the connection (SQLite keeps one)
    return view(resumed)


def _resume_here(task: Row, access: Access, answer: str) -> Row:
    """The answered run, in this request: the row records its ending (no job, as a blocking ``message/send``)."""
    run_id = str(uuid.uuid4())
    try:
        data = checkpoints.claim(str(task.checkpoint_id), access.job_owner, run_id)
    except ApiError as exc:  # 404 foreign or missing, 409 already answered, 410 expired
        raise NotWaiting(_detail(exc)) from None
    ended = NewTask(**_columns(task), stored=True)
    try:
        prepared, resumed = run_jobs.restore(str(task.checkpoint_id), answer, data)
        outcome = runs.execute(prepared, resume=resumed, job_id=run_id)
    except ApiError as exc:  # refused since it paused (check_run, a revoked share): a failed task
        _ended(ended, "failed", status_text=failure_text(task, _detail(exc)))
    except Exception:
        log.exception("A2A task %s of flow %s failed", task.id, access.flow_id)
        db.session().rollback()
        _ended(ended, "failed", status_text=failure_text(task, None))
    else:
        if outcome.suspended is not None:
            _paused(ended, outcome.suspended)
        elif outcome.failed is not None:
            _ended(ended, "failed", status_text=failure_text(task, runs.failure_text(outcome.failed)))
        else:
            _ended(ended, "completed", answer=last_chat_text(outcome.results[-1]))
    return _point(ended, job_id=None, state=ended.state, **_ending(ended))


def _point(task: Row, *, job_id: str | None, state: str, **ending: Any) -> NewTask:
    """Write what the row holds: the job that carries the task, or the ending of a run that had none."""
    values = {"answer": None, "status_text": None, "checkpoint_id": None, "input_request": None, **ending}
    now = db.utcnow()
    t = Task.__table__.c
    with db.transaction() as s:
        s.execute(sa.update(Task).where(t.id == task.id).values(job_id=job_id, state=state, updated_at=now, **values))
    fields = {**_columns(task), "job_id": job_id, "state": state, "updated_at": now, **values}
    return NewTask(**fields, stored=True)


def cancel(row: Row) -> Row:
    """Cancel a running task through the job queue; a task that ended is not cancelable (-32002)."""
    task = view(row)
    if task.state in TERMINAL or not task.job_id:
        raise TaskNotCancelable()
    appstate.jobs().cancel(str(task.job_id))
    return view(row)


# --- events -------------------------------------------------------------------------------------------
@dataclass
class Update:
    """One A2A event of a task: a status change or an artifact chunk."""

    kind: str  # "status" | "artifact"
    state: str | None = None
    text: str | None = None
    append: bool = False
    last: bool = False
    final: bool = False
    row: Row | None = None  # the task as it ended (final updates)


@dataclass
class _Follow:
    chunks: list[str] = field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    working: bool = False


def follow(row: Row, *, block_seconds: float = READ_BLOCK_SECONDS) -> Iterator[Update]:
    """The task's events from its start, translated from the run's typed events in the job's stream.

    Yields ``working``, the answer's token chunks as artifact chunks (or the whole answer at the
    end when the flow did not stream), and the final status.
    """
    jobs = appstate.jobs()
    seen = _Follow()
    cursor: str | None = None
    ended = not row.job_id
    while not ended:
        batch = jobs.read_events(str(row.job_id), cursor, block_seconds=block_seconds)
        if not batch:
            info = jobs.info(str(row.job_id))
            if info is None or info.state.terminal:
                break
            continue
        for event in batch:
            cursor = event.id
            if event.name in ("finished", "cancelled", "suspended") or (
                event.name == "error" and isinstance(event.data, dict) and set(event.data) == {"error"}
            ):
                ended = True
                break
            typed = run_events.decode(event.name, event.data)
            if typed is None:
                continue
            if not seen.working:
                seen.working = True
                yield Update("status", state="working")
            if isinstance(typed, run_events.TokenChunk) and typed.chunk:
                yield Update("artifact", text=typed.chunk, append=bool(seen.chunks))
                seen.chunks.append(typed.chunk)
            elif isinstance(typed, run_events.RunFailed):
                seen.error = typed.message
    task = _wait_ended(row)
    if not seen.working and task.state != "canceled":
        yield Update("status", state="working")
    if task.state == "completed":
        text = task.answer or ""
        if seen.chunks:
            rest = text[len("".join(seen.chunks)) :] if text.startswith("".join(seen.chunks)) else ""
            yield Update("artifact", text=rest, append=True, last=True)
        else:
            yield Update("artifact", text=text, last=True)
    yield Update("status", state=task.state, final=True, row=task)


def _wait_ended(row: Row, limit: float = 5.0) -> Row:
    """After the job's end event, its info may lag a moment behind on another backend: wait for it."""
    deadline = time.monotonic() + limit
    task = view(row)
    while task.state not in TERMINAL and time.monotonic() < deadline:
        time.sleep(0.02)
        task = view(row)
    return task
