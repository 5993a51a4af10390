"""The ticker: one daemon thread per web process (started by the plugin's first request, since threads do
not survive gunicorn's fork) that every ``SERVICE_TRIGGERS_TICK_S`` seconds fires the due schedules,
starts the due retries and fails the executions whose worker died. Every process may tick: each chore
claims its rows with a compare-and-set in the database, so nothing fires twice."""

from __future__ import annotations

import logging
import os
import threading
import time

import sqlalchemy as sa
from flask import Flask

from core import appstate, db
from core.jobs import QueueClosed
from service_triggers import executions, schedules
from service_triggers.config import settings
from service_triggers.models import Execution, Schedule

log = logging.getLogger(__name__)


def _due_probe() -> db.Prepared:
    """One read answering whether any chore has work now: the four chores' own conditions, each an ``EXISTS``
    on an index (a due schedule, a due retry, a queued or running job's execution old enough to be reaped, a
    stranded ``queued`` row). Compiled once, run on the driver (``core.db.Prepared``)."""
    s: sa.Table = Schedule.__table__  # type: ignore[assignment]
    t: sa.Table = Execution.__table__  # type: ignore[assignment]
    now: sa.BindParameter[object] = sa.bindparam("now")
    reap_before: sa.BindParameter[object] = sa.bindparam("reap")
    stranded_before: sa.BindParameter[object] = sa.bindparam("stranded")
    queued = t.c.status == "queued"
    return db.Prepared(
        sa.select(
            sa.or_(
                sa.exists().where(s.c.enabled.is_(True), s.c.next_fire_at <= now),
                sa.exists().where(t.c.status == "scheduled", t.c.due_at <= now),
                sa.exists().where(
                    sa.or_(queued, t.c.status == "running"),
                    t.c.job_id.is_not(None),
                    t.c.job_id != executions.CLAIMED,
                    t.c.started_at < reap_before,
                ),
                sa.exists().where(queued, t.c.job_id.is_(None), t.c.started_at < stranded_before),
            )
        )
    )


_PROBE = _due_probe()
IDLE = {"fired": 0, "retried": 0, "reaped": 0, "restarted": 0}


def anything_due(app: Flask, now: float) -> bool:
    """Whether a chore has work at ``now``: the idle tick (the common one) is this one read, no session."""
    params = {"now": now, "reap": now - executions.REAP_AFTER, "stranded": now - executions.STRANDED_AFTER}
    row = _PROBE.first(params, engine=appstate.engine(app))
    return bool(row and row[0])


def tick(app: Flask, now: float | None = None) -> dict[str, int]:
    """One tick of every chore (what the thread runs; tests and ``service schedules tick`` call it). A tick
    with nothing due (:func:`anything_due`) reads once and returns."""
    now = time.time() if now is None else now
    if not anything_due(app, now):
        return dict(IDLE)
    with app.app_context():
        try:
            return {
                "fired": schedules.tick(app, now),
                "retried": executions.start_due_retries(app, now),
                "reaped": executions.reap(app, now),
                "restarted": executions.restart_stranded(app, now),
            }
        finally:
            db.release(app)


class Ticker:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = -1
        self.apps: dict[int, Flask] = {}
        self.stop = threading.Event()
        #: the app this process's ticking was settled for (every request after the first checks only this;
        #: a forked child forgets it, so its first request starts its own thread)
        self.ready: Flask | None = None

    def ensure(self, app: Flask) -> None:
        """Follow ``app`` (the newest of the process); start this process's thread unless it runs or is off."""
        if self.ready is app:  # every request after the first: nothing to do
            return
        with self.lock:
            self.ready = app
            if settings(app).tick_s <= 0:  # off for this app: the thread, if any, ticks nothing
                self.apps = {}
                return
            self.apps = {id(app): app}
            if self.pid == os.getpid():
                return
            self.pid = os.getpid()
            self.stop = threading.Event()
            threading.Thread(target=self._loop, args=(self.stop,), name="triggers-ticker", daemon=True).start()

    def forked(self) -> None:
        """In a forked child: no thread runs here yet (the next request starts one)."""
        self.ready = None
        self.pid = -1
        self.lock = threading.Lock()

    def halt(self) -> None:
        with self.lock:
            self.stop.set()
            self.pid = -1
            self.ready = None

    def _loop(self, stop: threading.Event) -> None:
        while True:
            with self.lock:
                apps = list(self.apps.values())
            period = min((settings(a).tick_s for a in apps), default=1.0) or 1.0
            if stop.wait(period - (time.time() % period)):  # on the second: every process ticks together
                return
            for app in apps:
                try:
                    if appstate.jobs(app).closed:  # the app is finished (shut down, or a test's): its database
                        raise QueueClosed("the job queue is closed")  # may be another app's now: claim nothing
                    tick(app)
                except QueueClosed:  # follow it no more (a schedule it claimed is restarted by a live process)
                    with self.lock:
                        self.apps.pop(id(app), None)
                except Exception:  # a database hiccup: the next tick tries again
                    log.warning("the triggers tick failed", exc_info=True)


TICKER = Ticker()
os.register_at_fork(after_in_child=TICKER.forked)
