"""A system job enqueued at most once per interval by the whole deployment.

Each web process runs one daemon thread, started lazily by the plugin's first request (threads do not
survive gunicorn's fork), that follows the newest app of the process (apps are rebuilt on reload),
wakes every ``min(interval, 60)`` seconds and enqueues the job when the deployment-wide mark of the
shared state (lifetime: the interval) is free, so one job runs per interval whatever the number of
processes. An interval of 0 or less turns the schedule off. Used by the flows plugin's public-session
cleanup and the files plugin's ephemeral-file cleanup.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from flask import Flask

from core.appstate import state
from core.jobs import QueueClosed

log = logging.getLogger(__name__)


class PeriodicJob:
    def __init__(self, *, job: str, owner: str, mark: str, interval: Callable[[Flask], float], name: str) -> None:
        self.job = job  # the registered job name (``register_jobs``)
        self.owner = owner  # the job's owner (``system:...``)
        self.mark = mark  # the shared-state key of "enqueued during this interval"
        self.interval = interval  # seconds, from the app's settings
        self.name = name  # the thread's name, and how the log names this schedule
        self.lock = threading.Lock()
        self.pid = -1
        self.apps: dict[int, Flask] = {}

    def tick(self, app: Flask) -> str | None:
        """Enqueue the job if no process did during this interval; its id, or None."""
        st = state(app)
        interval = float(self.interval(app))
        if interval <= 0 or not st.shared.cas(self.mark, None, str(os.getpid()), ttl=interval):
            return None
        return str(st.jobs.enqueue(self.job, owner=self.owner, kwargs={}, meta={"system": True}))

    def ensure(self, app: Flask) -> None:
        """Follow ``app`` from now on; start this process's thread unless it runs or the schedule is off."""
        with self.lock:
            self.apps = {id(app): app}
            if self.pid == os.getpid() or float(self.interval(app)) <= 0:
                return
            self.pid = os.getpid()
            threading.Thread(target=self._loop, name=self.name, daemon=True).start()

    def _loop(self) -> None:
        stop = threading.Event()
        while True:
            with self.lock:
                apps = list(self.apps.values())
            interval = min((float(self.interval(a)) for a in apps), default=60.0)
            if stop.wait(max(1.0, min(interval, 60.0))):
                return
            for app in apps:
                try:
                    with app.app_context():
                        self.tick(app)
                except QueueClosed:  # the app is finished (shut down, or a test's): follow it no more
                    with self.lock:
                        self.apps.pop(id(app), None)
                except Exception:  # a database hiccup: the next tick tries again
                    log.warning("%s could not be scheduled", self.name, exc_info=True)
