"""Every run becomes an execution row: the ``observe_run`` observer and its batched writer.

A run in a request (``job_id`` None: the v1 run API, v2, MCP, responses...) hands its row to this
process's writer thread, which upserts every row queued meanwhile in one transaction (a few per
second at most): the run answers without waiting for it, so the hot path gains no synchronous write.
A run in a job (webhooks, schedules, retries, builds) writes its row before the job ends: an RQ work
horse exits right after, and its thread would die with its queue.

A failed execution is then *followed up* once (a compare-and-set on ``followed_up``): the flow's retry
policy schedules the next attempt (scheduled and webhook runs), and the error flow, if the flow names
one, runs with the failure's details (:mod:`service_triggers.executions`).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
from typing import Any

import sqlalchemy as sa
from cryptography.fernet import InvalidToken
from flask import Flask

from core import appstate, db, secrets
from core.contracts import RunEnded, RunStarted
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


def input_text(request: dict[str, Any]) -> str | None:
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


def row_of(ended: RunEnded, app: Flask | None = None) -> dict[str, Any]:
    """The execution row of an ended run (every column the writer sets); ``app`` seals its request variables."""
    run: RunStarted = ended.run
    request = dict(run.request)
    kept: dict[str, Any] | None = request
    if request.get("data") is not None or len(json.dumps(request, default=str)) > REQUEST_LIMIT:
        kept = None  # an unsaved editor graph or a huge payload: listed, not retried
    elif request.get("request_vars"):
        kept = seal_vars(app, request) if app is not None else {**request, "request_vars": {}}
    outputs = [o for o in ended.outputs if o]
    return {
        "id": run.run_id,
        "user_id": str(run.owner_id or run.user_id),
        "flow_id": str(run.flow_id),
        "flow_name": clip(run.flow_name, 255),
        "trigger": str(run.surface)[:32],
        "status": ended.status,
        "started_at": run.started_at,
        "ended_at": run.started_at + ended.duration_s,
        "duration_s": ended.duration_s,
        "due_at": None,
        "request": kept,
        "input_text": input_text(request),
        "output_text": clip("\n".join(outputs)) if outputs else None,
        "error": clip(ended.error),
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
    """Upsert ``rows`` in one transaction, then follow up the failed ones."""
    if not rows:
        return
    engine = appstate.engine(app)
    if engine.dialect.name in db.Prepared.FAST_DIALECTS:
        with db.raw(engine, write=True) as conn:
            _prepared_upsert(engine).execute_many(rows, conn, engine.dialect)
    else:
        with tx() as conn:
            conn.execute(_upsert(engine), rows)
    failed = [r["id"] for r in rows if r["status"] == "error"]
    if failed:
        from service_triggers import executions

        for execution_id in failed:
            try:
                executions.follow_up(app, execution_id)
            except Exception:
                log.exception("could not follow up failed execution %s", execution_id)


class Writer:
    """This process's queue of execution rows, written by one daemon thread in batches."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.rows: list[RunEnded] = []
        self.cond = threading.Condition()
        self.busy = False
        self.pid = os.getpid()
        threading.Thread(target=self._loop, name="executions-writer", daemon=True).start()
        atexit.register(self.flush)

    def put(self, ended: RunEnded) -> None:
        """Queue an ended run (its row is made in the writer thread: the run's request pays nothing more)."""
        with self.cond:
            self.rows.append(ended)
            self.cond.notify()

    def _take(self) -> list[dict[str, Any]]:
        with self.cond:
            taken, self.rows = self.rows, []
            self.busy = bool(taken)
        rows = []
        for ended in taken:
            try:
                rows.append(row_of(ended, self.app))
            except Exception:
                log.exception("could not record execution %s", ended.run.run_id)
        return rows

    def _write(self, rows: list[dict[str, Any]]) -> None:
        try:
            with self.app.app_context():
                try:
                    write(self.app, rows)
                finally:
                    db.release(self.app)
        except Exception:
            log.exception("could not record %d execution(s)", len(rows))
        finally:
            with self.cond:
                self.busy = False
                self.cond.notify_all()

    def _loop(self) -> None:
        while True:
            with self.cond:
                while not self.rows:
                    self.cond.wait()
            time.sleep(0.05)  # let the runs ending now join this batch
            self._write(self._take())

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until every row queued so far is written (readers call it: a list shows the runs just ended)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while (self.rows or self.busy) and time.monotonic() < deadline:
                self.cond.wait(0.05)


_writers: dict[int, Writer] = {}
_lock = threading.Lock()


def writer(app: Flask) -> Writer:
    with _lock:
        found = _writers.get(id(app))
        if found is None or found.pid != os.getpid():
            found = _writers[id(app)] = Writer(app)
        return found


def flush(app: Flask) -> None:
    found = _writers.get(id(app))
    if found is not None and found.pid == os.getpid():
        found.flush()


class Observer:
    __slots__ = ("app",)

    def __init__(self, app: Flask) -> None:
        self.app = app

    def end(self, ended: RunEnded) -> None:
        if ended.run.job_id is not None:  # in a job: written before the job ends (a work horse exits after it)
            try:
                write(self.app, [row_of(ended, self.app)])
            except Exception:
                log.exception("could not record execution %s", ended.run.run_id)
            return
        writer(self.app).put(ended)
