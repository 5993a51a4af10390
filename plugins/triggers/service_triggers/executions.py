"""Executions: list and read (owner-scoped), retry, the per-flow retry policy and error flow, and the
tick's two chores (due retries, executions whose worker died).

Runs a trigger starts (a schedule's tick, a signed webhook, a retry, an error flow) get their execution
row *before* they run (``queued``, the run's id chosen by this plugin): the row is the durable record a
202 answers for, and what the reaper finds when the worker running it died. The run's observer then
ends it (:mod:`service_triggers.recorder`).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from flask import Flask

from core import appstate, db
from core.errors import ApiError
from core.runs import RunRequest
from core.runs import jobs as run_jobs
from service_triggers.dbx import tx
from service_triggers.models import Execution, Policy
from service_triggers.recorder import LIVE, clip, input_text, live_row, pending_queued

log = logging.getLogger(__name__)

JOB = "triggers.run"
#: surfaces whose failures the retry policy retries
RETRIED = frozenset({"schedule", "trigger", "webhook"})
#: surfaces whose failures never start the error flow (the error flow itself; the editor's builds)
NO_ERROR_FLOW = frozenset({"error_flow", "build"})
#: an execution queued or running longer than this with its job ended is failed by the reaper (seconds)
REAP_AFTER = 2.0
LOST = "The worker running this execution stopped before the run ended"
#: a trigger's execution committed but never enqueued (its process died in between) is started after this (s)
STRANDED_AFTER = 60.0
#: the job id of a stranded execution one process claimed to start
CLAIMED = "claimed"

_T: sa.Table = Execution.__table__  # type: ignore[assignment]
_P: sa.Table = Policy.__table__  # type: ignore[assignment]

#: the job every trigger-started run is (the core's run job under this plugin's name)
RUN_JOB = run_jobs.job(JOB, "Run a flow for a schedule, a signed webhook, a retry or an error flow", module=__name__)


class NotFound(ApiError):
    def __init__(self, what: str = "Execution") -> None:
        super().__init__(404, f"{what} not found")


# --- starting a run ---------------------------------------------------------------------------------
def new_row(
    *,
    user_id: str,
    flow_id: str,
    flow_name: str | None,
    trigger: str,
    request: dict[str, Any],
    status: str = "queued",
    due_at: float | None = None,
    retry_of: str | None = None,
    attempt: int = 1,
    source_id: str | None = None,
    dedupe_key: str | None = None,
) -> dict[str, Any]:
    run_id = str(uuid.uuid4())
    return {
        "id": run_id,
        "user_id": user_id,
        "flow_id": flow_id,
        "flow_name": clip(flow_name, 255),
        "trigger": trigger,
        "status": status,
        "started_at": time.time(),
        "ended_at": None,
        "duration_s": None,
        "due_at": due_at,
        "request": {**request, "run_id": run_id, "surface": trigger},
        "input_text": input_text(request),
        "output_text": None,
        "error": None,
        "job_id": None,
        "session_id": None,
        "retry_of": retry_of,
        "attempt": attempt,
        "source_id": source_id,
        "dedupe_key": dedupe_key,
        "followed_up": False,
    }


def start(app: Flask, row: Mapping[str, Any]) -> str:
    """Enqueue the run of a committed ``queued`` row as its owner; record the job id. Returns the job id."""
    from service_triggers.recorder import unseal_vars

    request = RunRequest.from_json(unseal_vars(app, dict(row["request"])))
    job_id = run_jobs.enqueue(request, owner=str(row["user_id"]), job=JOB, meta={"execution_id": row["id"]}, app=app)
    with tx() as conn:
        conn.execute(
            _T.update()
            .where(_T.c.id == row["id"], sa.or_(_T.c.job_id.is_(None), _T.c.job_id == CLAIMED))
            .values(job_id=job_id)
        )
    return job_id


def request_for(flow_id: str, user_id: str, *, value: str | None = None, tweaks: Any = None, payload: Any = None):
    """The JSON run request of a trigger-started run of ``flow_id`` as ``user_id``."""
    return RunRequest(
        flow=flow_id,
        user_id=user_id,
        inputs=[run_input(value)],
        tweaks=dict(tweaks) if tweaks else None,
        webhook_payload=payload,
    ).to_json()


def run_input(value: str | None) -> Any:
    from core.runs import RunInput

    return RunInput(value)


# --- reading ----------------------------------------------------------------------------------------
def out(row: Any) -> dict[str, Any]:
    m = row._mapping if hasattr(row, "_mapping") else row
    return {
        "id": m["id"],
        "run_id": m["id"],
        "flow_id": m["flow_id"],
        "flow_name": m["flow_name"],
        "user_id": m["user_id"],
        "trigger": m["trigger"],
        "status": m["status"],
        "started_at": m["started_at"],
        "ended_at": m["ended_at"],
        "duration_s": m["duration_s"],
        "due_at": m["due_at"],
        "input": m["input_text"],
        "output": m["output_text"],
        "error": m["error"],
        "job_id": m["job_id"],
        "session_id": m["session_id"],
        "retry_of": m["retry_of"],
        "attempt": m["attempt"],
        "source_id": m["source_id"],
        "retryable": m["request"] is not None,
        "trace_url": f"/api/v1/monitor/traces/{m['id']}",
    }


def list_executions(
    app: Flask,
    user_id: str | None,
    *,
    flow_id: str | None = None,
    status: str | None = None,
    trigger: str | None = None,
    since: float | None = None,
    until: float | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    query = sa.select(_T) if user_id is None else sa.select(_T).where(_T.c.user_id == user_id)
    if flow_id:
        query = query.where(_T.c.flow_id == flow_id)
    if status:
        query = query.where(_T.c.status == status)
    if trigger:
        query = query.where(_T.c.trigger == trigger)
    if since is not None:
        query = query.where(_T.c.started_at >= since)
    if until is not None:
        query = query.where(_T.c.started_at < until)
    # newest first, ties by id in the same direction: one index range read backwards (migration triggers_0002);
    # a far page finds its keys in the index alone (core.db.page's deferred join)
    order = (_T.c.started_at.desc(), _T.c.id.desc())
    with tx() as conn:
        stored = [out(r) for r in db.page(conn, query, _T.c.id, order, offset, limit)]
    going = _live(app, user_id, flow_id, status, trigger, since, until) if offset == 0 else []
    if not going:
        return stored
    known = {r["id"] for r in stored}
    rows = [r for r in going if r["id"] not in known] + stored
    rows.sort(key=lambda r: -float(r["started_at"] or 0))
    return rows[:limit]


def _live(
    app: Flask,
    user_id: str | None,
    flow_id: str | None,
    status: str | None,
    trigger: str | None,
    since: float | None,
    until: float | None,
) -> list[dict[str, Any]]:
    """What this process knows and has not stored, filtered as the stored rows: the runs in a request going now
    (``running``) and the ``queued`` rows its writer has not written yet (a row stored meanwhile wins)."""
    rows: list[Mapping[str, Any]] = []
    if status in (None, "", "running"):
        rows += [live_row(run) for run in list(LIVE.values())]
    if status in (None, "", "queued"):
        rows += pending_queued(appstate.engine(app))
    found = []
    for row in rows:
        if (user_id is not None and row["user_id"] != user_id) or (flow_id and row["flow_id"] != flow_id):
            continue
        if (trigger and row["trigger"] != trigger) or (since is not None and row["started_at"] < since):
            continue
        if until is not None and row["started_at"] >= until:
            continue
        found.append(out(row))
    return found


class PendingRow:
    """A ``queued`` execution this process has not written yet (:func:`service_triggers.recorder.pending_queued`),
    read as a stored row is: its columns as attributes and as ``_mapping``."""

    __slots__ = ("_mapping",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._mapping = values

    def __getattr__(self, name: str) -> Any:
        try:
            return self._mapping[name]
        except KeyError:
            raise AttributeError(name) from None


def read(app: Flask, user_id: str | None, execution_id: str) -> Any:
    """The row ``execution_id`` of ``user_id`` (None: of any user; the caller checks access to its flow)."""
    with tx() as conn:
        query = sa.select(_T).where(_T.c.id == execution_id)
        if user_id is not None:
            query = query.where(_T.c.user_id == user_id)
        row = conn.execute(query).first()
    if row is not None:
        return row
    for pending in pending_queued(appstate.engine(app)):  # queued by this process an instant ago, not stored yet
        if pending["id"] == execution_id and user_id in (None, pending["user_id"]):
            return PendingRow(pending)
    raise NotFound()


def retry(app: Flask, user_id: str, execution_id: str, *, as_user: str | None = None) -> dict[str, Any]:
    """Run a finished execution again with the same inputs: a new execution linked to it (``retry_of``).

    ``as_user``: a team member retrying another user's execution of a shared flow (the caller checked that they
    may run it): the new execution is theirs and runs as them, with their variables, never the first run's
    request variables (its caller's ``X-SERVICE-GLOBAL-VAR-*`` values)."""
    old = read(app, user_id, execution_id)._mapping
    if old["request"] is None:
        raise ApiError(409, "This execution kept no request to run again (an unsaved graph or a too large input)")
    if old["status"] in ("queued", "running", "scheduled"):
        raise ApiError(409, "This execution has not ended yet")
    request = {k: v for k, v in old["request"].items() if k not in ("run_id",)}
    runner = str(old["user_id"])
    if as_user is not None and as_user != runner:
        runner = as_user
        request.update(user_id=as_user, principal=None, messages_as=None, request_vars={})
    row = new_row(
        user_id=runner,
        flow_id=old["flow_id"],
        flow_name=old["flow_name"],
        trigger="retry",
        request=request,
        retry_of=old["id"],
        attempt=int(old["attempt"]) + 1,
        source_id=old["source_id"],
    )
    with tx() as conn:
        conn.execute(_T.insert(), [row])
    row["job_id"] = start(app, row)
    return out(row)


# --- policy -----------------------------------------------------------------------------------------
def policy(app: Flask, flow_id: str) -> dict[str, Any] | None:
    with tx() as conn:
        row = conn.execute(sa.select(_P).where(_P.c.flow_id == flow_id)).first()
    return dict(row._mapping) if row is not None else None


def put_policy(app: Flask, user_id: str, flow_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
    values = {
        "user_id": user_id,
        "attempts": int(body.get("attempts", 1)),
        "backoff_s": float(body.get("backoff_s", 10.0)),
        "error_flow_id": body.get("error_flow_id"),
    }
    with tx() as conn:
        if conn.execute(_P.update().where(_P.c.flow_id == flow_id).values(**values)).rowcount == 0:  # type: ignore[attr-defined]
            conn.execute(_P.insert().values(flow_id=flow_id, **values))
    return {"flow_id": flow_id, **values}


# --- following a failure up -------------------------------------------------------------------------
def follow_up(app: Flask, execution_id: str) -> None:
    """Once per failed execution (a compare-and-set): schedule its retry, or run the error flow."""
    with tx() as conn:
        claimed = conn.execute(
            _T.update()
            .where(_T.c.id == execution_id, _T.c.status == "error", _T.c.followed_up.is_(False))
            .values(followed_up=True)
        ).rowcount  # type: ignore[attr-defined]
        if not claimed:
            return
        failed = conn.execute(sa.select(_T).where(_T.c.id == execution_id)).first()._mapping  # type: ignore[union-attr]
        found = conn.execute(sa.select(_P).where(_P.c.flow_id == failed["flow_id"])).first()
        if found is None:
            return
        rule = found._mapping
        root = _root_trigger(failed)
        if root in RETRIED and failed["request"] is not None and int(failed["attempt"]) < int(rule["attempts"]):
            delay = float(rule["backoff_s"]) * (2 ** (int(failed["attempt"]) - 1))
            request = {k: v for k, v in failed["request"].items() if k != "run_id"}
            retry_row = new_row(
                user_id=failed["user_id"],
                flow_id=failed["flow_id"],
                flow_name=failed["flow_name"],
                trigger=root,
                request=request,
                status="scheduled",
                due_at=time.time() + delay,
                retry_of=failed["id"],
                attempt=int(failed["attempt"]) + 1,
                source_id=failed["source_id"],
            )
            conn.execute(_T.insert(), [retry_row])
            return
        error_flow = rule["error_flow_id"]
        if not error_flow or failed["trigger"] in NO_ERROR_FLOW:
            return
        details = {
            "execution_id": failed["id"],
            "flow_id": failed["flow_id"],
            "flow_name": failed["flow_name"],
            "trigger": failed["trigger"],
            "attempt": failed["attempt"],
            "error": failed["error"],
            "input": failed["input_text"],
            "started_at": failed["started_at"],
        }
        row = new_row(
            user_id=failed["user_id"],
            flow_id=str(error_flow),
            flow_name=None,
            trigger="error_flow",
            request=request_for(str(error_flow), failed["user_id"], value=json.dumps(details)),
            source_id=failed["id"],
        )
        conn.execute(_T.insert(), [row])
    start(app, row)


def _root_trigger(row: Any) -> str:
    """The surface a (possibly retried) execution was first started by: ``schedule``, ``trigger``..."""
    return str((row["request"] or {}).get("surface") or row["trigger"])


# --- the tick's chores ------------------------------------------------------------------------------
def start_due_retries(app: Flask, now: float) -> int:
    """Start the retries whose time came; each once whatever the number of processes (compare-and-set)."""
    with tx() as conn:
        due = conn.execute(sa.select(_T.c.id).where(_T.c.status == "scheduled", _T.c.due_at <= now).limit(100)).all()
    started = 0
    for (execution_id,) in due:
        with tx() as conn:
            won = conn.execute(
                _T.update().where(_T.c.id == execution_id, _T.c.status == "scheduled").values(status="queued")
            ).rowcount  # type: ignore[attr-defined]
            row = conn.execute(sa.select(_T).where(_T.c.id == execution_id)).first() if won else None
        if row is not None:
            start(app, dict(row._mapping))
            started += 1
    return started


def restart_stranded(app: Flask, now: float) -> int:
    """Start the ``queued`` executions a process committed but died before enqueuing (once: a claim)."""
    with tx() as conn:
        stranded = conn.execute(
            sa.select(_T.c.id)
            .where(_T.c.status == "queued", _T.c.job_id.is_(None), _T.c.started_at < now - STRANDED_AFTER)
            .limit(100)
        ).all()
    started = 0
    for (execution_id,) in stranded:
        with tx() as conn:
            won = conn.execute(  # type: ignore[attr-defined]
                _T.update().where(_T.c.id == execution_id, _T.c.job_id.is_(None)).values(job_id=CLAIMED)
            ).rowcount
            row = conn.execute(sa.select(_T).where(_T.c.id == execution_id)).first() if won else None
        if row is not None:
            start(app, dict(row._mapping))
            started += 1
    return started


def reap(app: Flask, now: float) -> int:
    """Fail the queued or running executions whose job ended without ending them (its worker died)."""
    with tx() as conn:
        waiting = conn.execute(
            sa.select(_T.c.id, _T.c.job_id)
            .where(
                _T.c.status.in_(("queued", "running")),
                _T.c.job_id.is_not(None),
                _T.c.job_id != CLAIMED,
                _T.c.started_at < now - REAP_AFTER,
            )
            .limit(200)
        ).all()
    if not waiting:
        return 0
    queue = appstate.jobs(app)
    failed = 0
    for execution_id, job_id in waiting:
        info = queue.info(str(job_id))
        if info is not None and not info.state.terminal:
            continue
        with tx() as conn:
            won = conn.execute(
                _T.update()
                .where(_T.c.id == execution_id, _T.c.status.in_(("queued", "running")))
                .values(status="error", error=(info.error if info is not None and info.error else LOST), ended_at=now)
            ).rowcount  # type: ignore[attr-defined]
        if won:
            failed += 1
            follow_up(app, execution_id)
    return failed
