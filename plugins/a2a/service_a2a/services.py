"""A2A logic without request objects: which flows are agents, who may call them, tasks over the run service.

A task is a row of ``a2a_task`` (so ``tasks/get`` works on any process and after a
restart). A blocking ``message/send`` runs in the request (:func:`run_blocking`,
``core.runs.execute``) and writes the row once, ended. Streamed and non-blocking
tasks are a ``runs.flow`` job of the core run service: the job's stream holds the
run's typed events; :func:`follow` decodes them (``core.engine.events.decode``) into
the task's A2A events (status, artifact), and whoever sees a task end first writes
its final state to the row (:func:`finish`, idempotent). A run paused for human
input makes the task ``input-required``; :func:`resume` answers it through
``core.runs.jobs.resume``.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import sqlalchemy as sa
from a2a.compat.v0_3 import types as v03

from core import db, groupcommit, runs
from core.app import state
from core.contracts import FlowRecord
from core.engine import RunResult
from core.engine import events as run_events
from core.engine.results import last_chat_text
from core.errors import ApiError
from core.jobs import JobState
from core.runs import jobs as run_jobs
from core.runs import public
from service_a2a import hookspecs
from service_a2a.models import Task

log = logging.getLogger(__name__)

#: states after which a task's run no longer goes (``input-required``: until a message answers it)
TERMINAL = ("completed", "failed", "canceled", "rejected", "input-required")
FAILED_TEXT = "Flow execution failed"
#: how long a blocked read of the job's stream waits before it looks at the job again
READ_BLOCK_SECONDS = 5.0


# --- flows and access ---------------------------------------------------------------------------------
def is_agent(flow: FlowRecord | None) -> bool:
    return flow is not None and flow.flow_type == "agent" and bool(flow.a2a_enabled)


def find_agent(flow_id: str) -> FlowRecord | None:
    """The published agent flow ``flow_id`` whoever owns it (None: 404), with its project's auth type."""
    flow = _with_auth_type(flow_id, None)
    return flow if is_agent(flow) else None


def own_flow(user_id: str, flow_id: str) -> FlowRecord | None:
    """The caller's own flow ``flow_id``, published or not (another user's is None: 404), with its auth type."""
    flow = _with_auth_type(flow_id, user_id)
    if flow is None or str(flow.user_id) != str(user_id):
        return None
    return flow


def auth_type(flow: FlowRecord) -> str:
    """The auth type the agent's project asks of callers (``apikey`` without a project or auth settings)."""
    return flow.auth_type or "apikey"


def _with_auth_type(flow_id: str, user_id: str | None) -> FlowRecord | None:
    """The flow with its project's auth type, in one read of the flows plugin (``find_agent_flow``)."""
    try:
        uuid_of(str(flow_id))
    except ValueError:
        return None
    return state().host.hooks.first(hookspecs.find_agent_flow, flow_id=flow_id, user_id=user_id)


#: a flow's or owner's id parsed once per process (every call of an agent parsed the same ids again: ``uuid.UUID``
#: of a string is about 12 k instructions; UUIDs are immutable, so the cached objects are shared safely)
uuid_of = functools.lru_cache(maxsize=4096)(uuid.UUID)


def agents_of(user_id: str) -> list[FlowRecord]:
    agents = state().host.hooks.first(hookspecs.published_agents, user_id=user_id)
    return agents or []


def public_principal(flow_id: str) -> str:
    """The stable non-user principal anonymous callers of agent ``flow_id`` run as (nobody's variables)."""
    return public.principal(f"a2a:{flow_id}")  # the run service's one naming rule for anonymous principals


@dataclass(frozen=True)
class Access:
    """How a JSON-RPC call runs the agent: as its owner (key checked) or as the public principal."""

    flow_id: str
    owner_id: str
    public: bool

    @property
    def job_owner(self) -> str:
        return public.job_owner(f"a2a:{self.flow_id}") if self.public else self.owner_id

    def run_request(self, text: str, session: str) -> runs.RunRequest:
        return runs.RunRequest(
            flow=self.flow_id,
            # anonymous: the public lookup (the flows plugin's effective grant: an A2A project with
            # auth_type none), acting as the flow's stable public principal
            user_id=None if self.public else self.owner_id,
            surface="a2a",
            inputs=[runs.RunInput(text, "chat", None, session)],
            public=self.public,
            principal=public_principal(self.flow_id) if self.public else None,
        )


def session_for(flow_id: str, context_id: str) -> str:
    """The run session a context maps to (namespaced, so it never meets a playground session)."""
    return f"a2a:{flow_id}:{context_id}"


# --- messages in and out ------------------------------------------------------------------------------
def message_text(message: v03.Message) -> str:
    """The run input of a user message: its text parts, and data parts as JSON, one per line."""
    import json

    lines: list[str] = []
    for part in message.parts:
        root = part.root
        if isinstance(root, v03.TextPart):
            lines.append(root.text)
        elif isinstance(root, v03.DataPart):
            lines.append(json.dumps(root.data))
    if not lines:
        raise ApiError(422, "The message has no text or data part")
    return "\n".join(lines)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


# The v0.3 JSON of a task is built as plain dicts (what ``model_dump(mode="json", by_alias=True,
# exclude_none=True)`` of the a2a-sdk models gives; tests/a2a/test_a2a_task_json.py holds them together)
# and checked once with the SDK's ``Task`` model where it leaves: building the nested models and
# dumping them again cost more than the rest of the A2A layer.
def status_json(row: Any) -> dict[str, Any]:
    """A task row's ``TaskStatus`` (v0.3 JSON): its state, time, and the agent's message when it has one."""
    stamp = row.updated_at if row.updated_at.tzinfo else row.updated_at.replace(tzinfo=dt.UTC)
    out: dict[str, Any] = {"state": row.state}
    if row.status_text:
        parts: list[dict[str, Any]] = [{"kind": "text", "text": row.status_text}]
        if row.state == "input-required" and row.input_request:  # what the flow asks, as data too
            parts.append({"kind": "data", "data": dict(row.input_request)})
        out["message"] = {
            "contextId": row.context_id,
            "kind": "message",
            "messageId": str(uuid.uuid5(row.id, f"{row.state}:{row.checkpoint_id or ''}")),
            "parts": parts,
            "role": "agent",
            "taskId": str(row.id),
        }
    out["timestamp"] = stamp.isoformat()
    return out


def artifact_json(row: Any, text: str) -> dict[str, Any]:
    return {
        "artifactId": str(uuid.uuid5(row.id, "result")),
        "name": "result",
        "parts": [{"kind": "text", "text": text}],
    }


def task_json(row: Any, history_length: int | None = None) -> dict[str, Any]:
    """A task row as the v0.3 ``Task`` JSON (not validated yet: :func:`task_model` does)."""
    out: dict[str, Any] = {}
    if row.answer is not None:
        out["artifacts"] = [artifact_json(row, row.answer)]
    out["contextId"] = row.context_id
    if row.request and history_length != 0:
        out["history"] = [row.request]
    out["id"] = str(row.id)
    out["kind"] = "task"
    out["status"] = status_json(row)
    return out


def status(row: Any) -> v03.TaskStatus:
    return v03.TaskStatus.model_validate(status_json(row))


def artifact(row: Any, text: str) -> v03.Artifact:
    return v03.Artifact.model_validate(artifact_json(row, text))


def task_model(row: Any, history_length: int | None = None) -> v03.Task:
    return v03.Task.model_validate(task_json(row, history_length))


# --- tasks --------------------------------------------------------------------------------------------
#: a task row inserted as a Core table statement, built once (the ORM's unit of work cost more than the write)
_INSERT = sa.insert(cast(sa.Table, Task.__table__))
#: the blocking send's insert on the driver (core.db.Prepared): through the session it cost 0.4 ms
_TASK_INSERT = db.Prepared(_INSERT, column_keys=[c.key for c in Task.__table__.columns])

#: the run events a task's job keeps in its stream (what :func:`follow` translates)
JOB_EVENTS = ["vertex_start", "token", "error"]


@dataclass
class NewTask:
    """A task row made in this request (the columns of :class:`Task`, without the ORM's instrumentation).

    ``stored``: inserted already (a streamed or non-blocking task); a blocking ``message/send``
    inserts it once, ended.
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
        return finish(row, "failed", status_text=failure_text(row, _detail(exc)))
    # the lookup's connection stays with this request through the run, as in every in-request run of the run
    # service (the simplified run too): releasing it here cost a second checkout (a ping on PostgreSQL)
    written = False

    def on_result(result: RunResult) -> None:
        nonlocal written
        if result.status == "suspended":  # the row needs the checkpoint, written after this: stored below
            return
        if result.ok:
            _end(row, "completed", answer=last_chat_text(result))
        else:
            _end(row, "failed", status_text=failure_text(row, runs.failure_text(result)))
        # written with the run's messages, in their commit (core.groupcommit: in a group with the runs that end
        # now, on the driver): no session begun for one insert (bench/NOTES.md, issue 14)
        groupcommit.defer(state().engine, _TASK_INSERT, [_columns(row)])
        row.stored = written = True

    try:
        outcome = runs.execute(prepared, on_result=on_result)
    except Exception:
        log.exception("A2A task %s of flow %s failed", row.id, access.flow_id)
        groupcommit.discard()  # not written yet, or written with the messages before the failure
        db.session().rollback()
        stored = db.session().get(Task, row.id) if written else None  # committed before the failure
        row.stored = False
        return stored or finish(row, "failed", status_text=failure_text(row, None))
    if written:
        groupcommit.flush(state().engine)  # no message to store: nothing committed the row yet
        return row
    return finish_outcome(row, outcome)


def finish_outcome(row: Row, outcome: runs.RunOutcome) -> Row:
    """Write the end of an in-request run: completed, failed, or waiting for input (its checkpoint)."""
    if outcome.suspended is not None:
        return suspended(row, outcome.suspended)
    if outcome.failed is not None:
        return finish(row, "failed", status_text=failure_text(row, runs.failure_text(outcome.failed)))
    return finish(row, "completed", answer=last_chat_text(outcome.results[-1]))


def _detail(exc: ApiError) -> str:
    return exc.detail if isinstance(exc.detail, str) else "the run was refused"


# --- waiting for input --------------------------------------------------------------------------------
def input_text(request: Mapping[str, Any]) -> str:
    """What a paused flow asks, as the text of the task's status message."""
    asked = request.get("prompt") or request.get("question") or request.get("message")
    text = str(asked) if asked else "The flow needs your input to continue."
    decisions = request.get("decisions")
    if isinstance(decisions, list) and decisions:
        text += f" (answer one of: {', '.join(str(d) for d in decisions)})"
    return text


def suspended(row: Row, paused: Mapping[str, Any]) -> Row:
    """A run that paused for human input: the task is ``input-required`` with the request in its status."""
    request = dict(paused.get("request") or {})
    return finish(
        row,
        "input-required",
        status_text=input_text(request),
        checkpoint_id=str(paused.get("checkpoint_id") or paused.get("request_id")),
        input_request=request,
    )


class NotWaiting(Exception):
    """A message for a task that is not waiting for input (or an answer that lost the race)."""


def resume(row: Row, access: Access, message: v03.Message) -> Row:
    """Answer an ``input-required`` task: its checkpoint resumed through ``core.runs`` (a ``runs.resume`` job).

    The message's text is the answer. The checkpoint is claimed exactly once (a second answer
    fails); the task goes back to ``working`` and follows the job that continues the run.
    """
    row = sync(row)
    if row.state != "input-required" or not row.checkpoint_id:
        raise NotWaiting(f"Task {row.id} is {row.state}, not waiting for input")
    if message.context_id and message.context_id != row.context_id:
        raise NotWaiting(f"Task {row.id} belongs to another context")
    answer = message_text(message)
    db.release()
    try:
        job_id = run_jobs.resume(row.checkpoint_id, access.job_owner, answer, meta={"a2a_task": str(row.id)})
    except ApiError as exc:  # 404 foreign or missing, 409 already answered, 410 expired
        raise NotWaiting(_detail(exc)) from None
    t = Task.__table__.c
    with db.transaction() as s:
        s.execute(
            sa.update(Task)
            .where(t.id == row.id, t.state == "input-required")
            .values(
                state="working",
                job_id=job_id,
                checkpoint_id=None,
                input_request=None,
                status_text=None,
                updated_at=db.utcnow(),
            )
        )
    resumed = db.session().get(Task, row.id, populate_existing=True) or row
    db.release()  # the caller follows the job next: the job needs the connection (SQLite keeps one)
    return resumed


def get(flow_id: str, task_id: str) -> Task | None:
    """The task ``task_id`` of agent ``flow_id`` (a task of another flow is not found)."""
    try:
        key = uuid.UUID(str(task_id))
    except ValueError:
        return None
    row = db.session().get(Task, key)
    return row if row is not None and str(row.flow_id) == str(flow_id) else None


def finish(
    row: Row,
    new_state: str,
    *,
    answer: str | None = None,
    status_text: str | None = None,
    checkpoint_id: str | None = None,
    input_request: dict[str, Any] | None = None,
) -> Row:
    """Write a task's final state once: the first process to see the end wins, later calls read it."""
    if isinstance(row, NewTask) and not row.stored:  # a blocking message/send: one insert, ended
        _end(row, new_state, answer, status_text, checkpoint_id, input_request)
        with db.transaction() as s:  # a Core insert: the ORM's unit of work cost more than the write
            s.execute(_INSERT, [_columns(row)])
        row.stored = True
        return row
    values = {
        "state": new_state,
        "answer": answer,
        "status_text": status_text,
        "checkpoint_id": checkpoint_id,
        "input_request": input_request,
        "updated_at": db.utcnow(),
    }
    t = Task.__table__.c
    with db.transaction() as s:
        s.execute(sa.update(Task).where(t.id == row.id, t.state.not_in(TERMINAL)).values(**values))
    # the row read back (the caller's instance may belong to a session that ended, as in a stream)
    return db.session().get(Task, row.id, populate_existing=True) or row


def _end(
    row: Row,
    new_state: str,
    answer: str | None = None,
    status_text: str | None = None,
    checkpoint_id: str | None = None,
    input_request: dict[str, Any] | None = None,
) -> None:
    """Set the end of a task that is not stored yet on its row object."""
    row.state = new_state
    row.answer = answer
    row.status_text = status_text
    row.checkpoint_id = checkpoint_id
    row.input_request = input_request
    row.updated_at = db.utcnow()


def _columns(row: Row) -> dict[str, Any]:
    return {c.key: getattr(row, c.key) for c in Task.__table__.columns}


def failure_text(row: Row, error: str | None) -> str:
    """A failed task's message: the reason for the owner's key, only "Flow execution failed" for the public."""
    if row.public or not error:
        return FAILED_TEXT
    return f"{FAILED_TEXT}: {error}"


def answer_of(result: Any) -> str:
    """The answer of a finished ``runs.flow`` job: the last message of its simplified run response."""
    texts: list[str] = []
    for run in (result or {}).get("outputs") or []:
        for out in run.get("outputs") or []:
            for message in out.get("messages") or []:
                if message.get("message") is not None:
                    texts.append(str(message["message"]))
    return texts[-1] if texts else ""


def sync(row: Row) -> Row:
    """Bring a running task's row up to date with its job (the job may have ended on another process)."""
    if row.state in TERMINAL or not row.job_id:
        return row
    info = state().jobs.info(row.job_id)
    if info is None:
        return finish(row, "failed", status_text="Task interrupted: its run is gone (the server restarted)")
    if info.state is JobState.FINISHED:
        return finish(row, "completed", answer=answer_of(info.result))
    if info.state is JobState.FAILED:
        return finish(row, "failed", status_text=failure_text(row, info.error))
    if info.state is JobState.CANCELLED:
        return finish(row, "canceled", status_text="Task canceled")
    if info.state is JobState.SUSPENDED:
        return suspended(row, info.result if isinstance(info.result, Mapping) else {})
    if info.state is JobState.RUNNING and row.state == "submitted":
        row.state = "working"  # shown, not stored: the row keeps the states that matter after a restart
    return row


def cancel(row: Row) -> Row:
    """Cancel a running task through the job queue; a task that ended is not cancelable (-32002)."""
    row = sync(row)
    if row.state in TERMINAL:
        raise TaskNotCancelable()
    state().jobs.cancel(str(row.job_id))
    return finish(row, "canceled", status_text="Task canceled")


class TaskNotCancelable(Exception):
    pass


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
    end when the flow did not stream), and the final status; the row is finished on the way.
    """
    jobs = state().jobs
    seen = _Follow()
    cursor: str | None = None
    ended = False
    if row.state in TERMINAL and not row.job_id:
        ended = True
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
    row = sync(_wait_ended(row))
    if not seen.working and row.state != "canceled":
        yield Update("status", state="working")
    if row.state == "completed":
        text = row.answer or ""
        if seen.chunks:
            rest = text[len("".join(seen.chunks)) :] if text.startswith("".join(seen.chunks)) else ""
            yield Update("artifact", text=rest, append=True, last=True)
        else:
            yield Update("artifact", text=text, last=True)
    yield Update("status", state=row.state, final=True, row=row)


def _wait_ended(row: Row, limit: float = 5.0) -> Row:
    """After the job's end event, its info may lag a moment behind on another backend: wait for it."""
    deadline = time.monotonic() + limit
    row = sync(row)
    while row.state not in TERMINAL and time.monotonic() < deadline:
        time.sleep(0.02)
        row = sync(row)
    return row


def delete_user_rows(user_id: str) -> None:
    try:
        owner = uuid.UUID(str(user_id))
    except ValueError:
        return
    with db.transaction() as s:
        s.execute(sa.delete(Task).where(Task.__table__.c.owner_id == owner))
