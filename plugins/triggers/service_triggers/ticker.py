"""The ticker: one daemon thread per web process (started by the plugin's first request, since threads do
not survive gunicorn's fork) that every ``SERVICE_TRIGGERS_TICK_S`` seconds fires the due schedules,
starts the due retries and fails the executions whose worker died. Every process may tick: each chore
claims its rows with a compare-and-set in the database, so nothing fires twice."""

from __future__ import annotations

import logging
import os
import threading
import time

from flask import Flask

from core import db
from service_triggers import executions, schedules
from service_triggers.config import settings

log = logging.getLogger(__name__)


def tick(app: Flask, now: float | None = None) -> dict[str, int]:
    """One tick of every chore (what the thread runs; tests and ``service schedules tick`` call it)."""
    now = time.time() if now is None else now
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

    def ensure(self, app: Flask) -> None:
        """Follow ``app`` (the newest of the process); start this process's thread unless it runs or is off."""
        if self.pid == os.getpid() and id(app) in self.apps:  # every request after the first: nothing to do
            return
        with self.lock:
            if settings(app).tick_s <= 0:  # off for this app: the thread, if any, ticks nothing
                self.apps = {}
                return
            self.apps = {id(app): app}
            if self.pid == os.getpid():
                return
            self.pid = os.getpid()
            self.stop = threading.Event()
            threading.Thread(target=self._loop, args=(self.stop,), name="triggers-ticker", daemon=True).start()

    def halt(self) -> None:
        with self.lock:
            self.stop.set()
            self.pid = -1

    def _loop(self, stop: threading.Event) -> None:
        while True:
            with self.lock:
                apps = list(self.apps.values())
            period = min((settings(a).tick_s for a in apps), default=1.0) or 1.0
            if stop.wait(period - (time.time() % period)):  # on the second: every process ticks together
                return
            for app in apps:
                try:
                    tick(app)
                except Exception:  # a database hiccup: the next tick tries again
                    log.warning("the triggers tick failed", exc_info=True)


TICKER = Ticker()
