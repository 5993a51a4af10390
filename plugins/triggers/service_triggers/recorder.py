"""Every run becomes an execution row: the ``observe_run`` observer.

A run's row is written in the run's own group commit: the observer hears the end as the last input's result
is known, before the run's messages are stored, and hands its row to :func:`core.groupcommit.defer`; the
messages' store writes it in their transaction (with the other runs ending now), or the run service flushes
it as the run returns when no message was stored. So a run answers once its row is committed, with no
commit of its own, no thread and no second transaction (``bench/NOTES.md``, issue 32).

A run in a job (a schedule's tick, a signed webhook, a retry, an error flow, the editor's builds) is marked
``running`` as it starts (the trigger's ``queued`` row, or a new row): the list shows it while it goes, and
the reaper fails it if its worker dies. A run in a request is listed as ``running`` from this process's
memory (:data:`LIVE`) while it goes: writing a row at its start would cost every run a second commit.

A failed execution is written at once (not deferred) and then *followed up* once (a compare-and-set on
``followed_up``): the flow's retry policy schedules the next attempt (scheduled and webhook runs), and the
error flow, if the flow names one, runs with the failure's details (:mod:`service_triggers.executions`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from cryptography.fernet import InvalidToken
from flask import Flask, current_app, has_app_context

from core import appstate, batches, db, groupcommit, secrets
from core.contracts import RunEnded, RunQueued, RunStarted
from service_triggers.dbx import tx
from service_triggers.models import Execution

log = logging.getLogger(__name__)

#: characters of input, output and error text kept per execution
TEXT_LIMIT = 4000
#: bytes of a run request kept for retries (a larger one is not kept: its execution cannot be retried)
REQUEST_LIMIT = 64 * 1024
#: surfaces whose runs are not recorded: none by default (the editor's builds are executions too)
_T: sa.Table = Execution.__table__  # type: ignore[assignment]


def clip(text: str | None, limit: int = TEXT_LIMIT) -> str | None:
    if text is None:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def input_text(request: Mapping[str, Any]) -> str | None:
    values = [str(i["value"]) for i in request.get("inputs") or [] if isinstance(i, dict) and i.get("value")]
    if request.get("webhook_payload"):
        values.append(request["webhook_payload"])
    return clip("\n".join(values)) if values else None


#: the key under which a stored request keeps its request variables encrypted
SEALED = "sealed"


def seal_vars(app: Flask, request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with its request variables (``X-SERVICE-GLOBAL-VAR-*`` header values: often keys)
    encrypted under the service's secret key: a stored execution never holds them in clear."""
    values = request.get("request_vars")
    if not values:
        return request
    token = secrets.fernet(appstate.settings(app)).encrypt(json.dumps(values).encode()).decode()
    return {**request, "request_vars": {SEALED: token}}


def unseal_vars(app: Flask, request: dict[str, Any]) -> dict[str, Any]:
    """The stored ``request`` with its request variables decrypted again (for a retry). Values sealed
    under a key that was since rotated away cannot be read: the retry runs without them."""
    values = request.get("request_vars")
    if not isinstance(values, dict) or SEALED not in values:
        return request
    try:
        clear = json.loads(secrets.fernet(appstate.settings(app)).decrypt(str(values[SEALED]).encode()))
    except InvalidToken:
        log.warning("the request variables of a stored execution were sealed under an older key: dropped")
        clear = {}
    return {**request, "request_vars": clear}


def _size(request: Mapping[str, Any]) -> int:
    """About the JSON size of ``request``: its inputs, payload and tweaks (the rest is a few short fields)."""
    size = sum(len(str(i.get("value") or "")) for i in request.get("inputs") or () if isinstance(i, dict))
    size += len(request.get("webhook_payload") or "")
    tweaks = request.get("tweaks")
    return size + (len(json.dumps(tweaks, default=str)) if tweaks else 0)


def row_of(ended: RunEnded, app: Flask | None = None) -> dict[str, Any]:
    """The execution row of an ended run (every column the upsert sets); ``app`` seals its request variables."""
    run: RunStarted = ended.run
    # the run service's request JSON, one level copied (stored as the row is committed, right after; never
    # changed here): a deep copy was most of what recording cost a run
    shallow = getattr(run.request, "shallow", None)
    request: dict[str, Any] = shallow() if shallow is not None else dict(run.request)
    kept: dict[str, Any] | None = request
    if request.get("data") is not None or _size(request) > REQUEST_LIMIT:
        kept = None  # an unsaved editor graph or a huge payload: listed, not retried
    elif request.get("request_vars"):
        kept = seal_vars(app, request) if app is not None else {**request, "request_vars": {}}
    outputs = [o for o in ended.outputs if o]
    error = ended.error
    return {
        "id": run.run_id,
        "user_id": str(run.owner_id or run.user_id),
        "flow_id": str(run.flow_id),
        "flow_name": clip(run.flow_name, 255),
        "trigger": run.surface[:32],
        "status": ended.status,
        "started_at": run.started_at,
        "ended_at": run.started_at + ended.duration_s,
        "duration_s": ended.duration_s,
        "due_at": None,
        "request": kept,
        "input_text": input_text(request),
        "output_text": clip("\n".join(outputs)) if outputs else None,
        "error": clip(error) if error else None,
        "job_id": run.job_id,
        "session_id": clip(run.session_id, 255),
        "retry_of": None,
        "attempt": 1,
        "source_id": None,
        "dedupe_key": None,
        "followed_up": False,
    }


#: what an ended run changes on a row a trigger queued before it ran
_ENDING = (
    "flow_name",
    "session_id",
    "status",
    "started_at",
    "ended_at",
    "duration_s",
    "output_text",
    "error",
    "job_id",
)


def _upsert(engine: sa.Engine) -> Any:
    from sqlalchemy.dialects import postgresql, sqlite

    stmt: Any = (postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert)(_T)
    return stmt.on_conflict_do_update(
        index_elements=["id"],
        set_={name: stmt.excluded[name] for name in _ENDING},
        where=sa.or_(_T.c.status == "queued", _T.c.status == "running"),
    )


#: the upsert compiled once per dialect, run on the driver (``core.db.Prepared``): building and compiling
#: the statement and executing it through the session cost more than the rows themselves
_UPSERTS: dict[str, db.Prepared] = {}


def _prepared_upsert(engine: sa.Engine) -> db.Prepared:
    found = _UPSERTS.get(engine.dialect.name)
    if found is None:
        found = _UPSERTS[engine.dialect.name] = db.Prepared(_upsert(engine))
    return found


def write(app: Flask, rows: list[dict[str, Any]]) -> None:
    """Upsert ``rows`` in one transaction now, then follow up the failed ones."""
    if not rows:
        return
    engine = appstate.engine(app)
    if engine.dialect.name in db.Prepared.FAST_DIALECTS:
        groupcommit.submit(engine, [(_prepared_upsert(engine), rows)])
    else:
        with tx() as conn:
            conn.execute(_upsert(engine), rows)
    follow_up_failed(app, rows)


def follow_up_failed(app: Flask, rows: list[dict[str, Any]]) -> None:
    failed = [r["id"] for r in rows if r["status"] == "error"]
    if not failed:
        return
    from service_triggers import executions

    for execution_id in failed:
        try:
            executions.follow_up(app, execution_id)
        except Exception:
            log.exception("could not follow up failed execution %s", execution_id)


#: surfaces whose queued runs get no row here: this plugin's own (their ``queued`` row is written before they
#: are queued, by :mod:`service_triggers.executions`) and the editor's builds (the editor shows their progress;
#: a row at enqueue would cost every build a commit)
NOT_QUEUED = frozenset({"schedule", "trigger", "retry", "error_flow", "build"})


#: the job backend whose jobs start as they are queued (a thread each): no ``queued`` row for its runs
STARTS_AT_ONCE = "inprocess"


def _insert_queued(engine: sa.Engine) -> Any:
    from sqlalchemy.dialects import postgresql, sqlite

    stmt: Any = (postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert)(_T)
    return stmt.on_conflict_do_nothing(index_elements=["id"])  # its worker may have marked it running already


_QUEUED_INSERTS: dict[str, db.Prepared] = {}


def queued_row(run: RunQueued, app: Flask | None = None) -> dict[str, Any]:
    """The ``queued`` execution row of a run put on the job queue by another surface (``on_run_queued``)."""
    request = dict(run.request)
    kept: dict[str, Any] | None = request
    if request.get("data") is not None or _size(request) > REQUEST_LIMIT:
        kept = None
    elif request.get("request_vars"):
        kept = seal_vars(app, request) if app is not None else {**request, "request_vars": {}}
    return {
        "id": run.run_id,
        "user_id": str(request.get("user_id") or run.user_id),
        "flow_id": str(run.flow_id),
        "flow_name": clip(run.flow_name, 255),
        "trigger": str(run.surface)[:32],
        "status": "queued",
        "started_at": run.queued_at,
        "ended_at": None,
        "duration_s": None,
        "due_at": None,
        "request": kept,
        "input_text": input_text(request),
        "output_text": None,
        "error": None,
        "job_id": run.job_id,
        "session_id": clip(request.get("session_id"), 255),
        "retry_of": None,
        "attempt": 1,
        "source_id": None,
        "dedupe_key": None,
        "followed_up": False,
    }


def queued(run: RunQueued) -> None:
    """``on_run_queued``: a webhook's, a v2 background run's (any surface but :data:`NOT_QUEUED`) execution is
    listed ``queued`` from now until its worker starts it (its ``running`` row replaces it); the reaper fails it
    if its job ends without running it. On a backend whose jobs wait for a worker (RQ); the in-process backend
    starts each job in a thread as it is queued, and that thread writes the row.

    The row is written off the request, with the other rows queued meanwhile (:mod:`core.batches`): the job on
    the queue is the durable record of the request (its worker writes the execution as it starts), so a
    commit before the 202 would buy nothing but latency (it cost intake 20% of its CPU on RQ; bench/NOTES.md).
    Until written it is listed from this process's memory (:func:`pending_queued`). A ``queued`` insert never
    overwrites a row its worker wrote first."""
    if run.surface in NOT_QUEUED:
        return
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    if appstate.jobs(app).backend == STARTS_AT_ONCE:
        return  # its thread is starting it now (and writes it ``running``): a row would cost intake a commit
    _queued_writer(appstate.engine(app)).put((run, app))  # its row is built in the writer's thread too


def _queued_writer(engine: sa.Engine) -> batches.BatchWriter[tuple[RunQueued, Flask]]:
    return batches.writer(engine, "queued-executions", _write_queued, interval=0.05, retry=True)


def _write_queued(engine: sa.Engine, queued: list[tuple[RunQueued, Flask]]) -> None:
    rows = []
    for run, app in queued:
        try:
            rows.append(queued_row(run, app))
        except Exception:  # one run's row that cannot be built is left out, not retried with the batch forever
            log.warning("the queued execution row of run %s could not be built", run.run_id, exc_info=True)
    if not rows:
        return
    name = engine.dialect.name
    if name in db.Prepared.FAST_DIALECTS:
        statement = _QUEUED_INSERTS.get(name)
        if statement is None:
            statement = _QUEUED_INSERTS[name] = db.Prepared(_insert_queued(engine))
        groupcommit.submit(engine, [(statement, rows)])
    else:
        with engine.begin() as conn:
            conn.execute(_insert_queued(engine), rows)


def pending_queued(engine: sa.Engine) -> list[dict[str, Any]]:
    """The ``queued`` rows this process has not written yet (listed with the stored ones)."""
    return [queued_row(run, app) for run, app in _queued_writer(engine).pending()]


#: the runs in a request going on in this process now, by run id (listed as ``running``)
LIVE: dict[str, RunStarted] = {}


def live_row(run: RunStarted) -> dict[str, Any]:
    """The execution row of a run in a request that has not ended yet (listed, never stored)."""
    return {
        "id": run.run_id,
        "user_id": str(run.owner_id or run.user_id),
        "flow_id": str(run.flow_id),
        "flow_name": clip(run.flow_name, 255),
        "trigger": str(run.surface)[:32],
        "status": "running",
        "started_at": run.started_at,
        "ended_at": None,
        "duration_s": None,
        "due_at": None,
        "request": None,
        "input_text": None,
        "output_text": None,
        "error": None,
        "job_id": None,
        "session_id": clip(run.session_id, 255),
        "retry_of": None,
        "attempt": 1,
        "source_id": None,
        "dedupe_key": None,
        "followed_up": False,
    }


def _running_row(run: RunStarted) -> dict[str, Any]:
    """The row a job's run writes as it starts: ``running`` (a trigger's ``queued`` row becomes it)."""
    row = live_row(run)
    row["job_id"] = run.job_id
    try:
        row["input_text"] = input_text(run.request)
    except Exception:  # the row is listed without it
        log.debug("no input text for run %s", run.run_id, exc_info=True)
    return row


class Observer:
    """One run's recorder (``observe_run``)."""

    __slots__ = ("app", "deferred", "run")

    def __init__(self, app: Flask, run: RunStarted) -> None:
        self.app = app
        self.run = run
        #: the row handed to the run's group commit by :meth:`ending` (None: not yet, or not deferrable)
        self.deferred: dict[str, Any] | None = None
        if run.job_id is None:
            LIVE[run.run_id] = run
            return
        try:  # a job's run: ``running`` now, durably (the reaper ends it if the worker dies)
            write(app, [_running_row(run)])
        except Exception:
            log.exception("could not mark execution %s running", run.run_id)

    def ending(self, ended: RunEnded) -> None:
        """The run's last result is known, its messages not stored yet: a run that did not fail hands its row
        to the run's group commit (the messages' store writes it in their transaction; the run service flushes
        it as the run returns when no message was stored). A failure waits for :meth:`end`."""
        if ended.status == "error" or not has_app_context():
            return
        engine = appstate.engine(self.app)
        if engine.dialect.name not in db.Prepared.FAST_DIALECTS:
            return
        row = row_of(ended, self.app)
        groupcommit.defer(engine, _prepared_upsert(engine), [row])
        self.deferred = row

    def end(self, ended: RunEnded) -> None:
        run = self.run
        if run.job_id is None:
            LIVE.pop(run.run_id, None)
        deferred = self.deferred
        if deferred is not None and deferred["status"] == ended.status:
            return  # in the run's group commit already
        try:
            row = row_of(ended, self.app)
        except Exception:
            log.exception("could not record execution %s", run.run_id)
            return
        try:
            if deferred is not None:  # the run failed after all (its messages' store raised): not "ok"
                deferred.update(row)  # if it is still waiting to be written, it is written as it ended
            write(self.app, [row])  # a failure is written now and followed up; so is a run without ``ending``
        except Exception:
            log.exception("could not record execution %s", run.run_id)


def observe(run: RunStarted) -> Observer:
    """``observe_run``: the recorder of ``run``, in this request's app."""
    return Observer(current_app._get_current_object(), run)  # type: ignore[attr-defined]
