"""The public-session cleanup: anonymous playground sessions older than ``public_flow_expiration`` go.

* job ``flows.public_cleanup`` (owner ``system:public-cleanup``) calls
  :func:`core.runs.public.expire`: every principal idle for longer than the expiration loses its
  rows through ``on_user_deleted`` (messages, vertex builds); it runs on the job backend (an RQ
  worker in scale-out, a thread of a web process otherwise);
* a scheduler thread per web process, started lazily by the first public lookup (threads do not
  survive gunicorn's fork), wakes every ``min(public_flow_cleanup_interval, 60)`` seconds and
  enqueues the job when the deployment-wide mark of the shared state (``flows:public-cleanup``,
  lifetime ``public_flow_cleanup_interval``) is free, so one job runs per interval whatever the
  number of processes.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from flask import Flask

from core.app import state
from core.jobs import JobContext
from service_flows.config import settings as flows_settings

log = logging.getLogger(__name__)

CLEANUP_JOB = "flows.public_cleanup"
CLEANUP_OWNER = "system:public-cleanup"
_MARK = "flows:public-cleanup"


def cleanup_job(ctx: JobContext) -> dict[str, Any]:
    from core.runs import public

    gone = public.expire(ctx.app)
    return {"expired_principals": len(gone)}


def tick(app: Flask) -> str | None:
    """Enqueue the cleanup job if no process did during this interval; its id, or None."""
    st = state(app)
    interval = float(flows_settings(app).public_flow_cleanup_interval)
    if interval <= 0 or not st.shared.cas(_MARK, None, str(os.getpid()), ttl=interval):
        return None
    return str(st.jobs.enqueue(CLEANUP_JOB, owner=CLEANUP_OWNER, kwargs={}, meta={"system": True}))


class Scheduler:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = -1
        self.apps: dict[int, Flask] = {}

    def ensure(self, app: Flask) -> None:
        with self.lock:
            self.apps = {id(app): app}  # the newest app of the process (apps are rebuilt on reload)
            if self.pid == os.getpid():
                return
            self.pid = os.getpid()
            threading.Thread(target=self._loop, name="public-cleanup", daemon=True).start()

    def _loop(self) -> None:
        stop = threading.Event()
        while True:
            with self.lock:
                apps = list(self.apps.values())
            interval = min((float(flows_settings(a).public_flow_cleanup_interval) for a in apps), default=60.0)
            if stop.wait(max(1.0, min(interval, 60.0))):
                return
            for app in apps:
                try:
                    with app.app_context():
                        tick(app)
                except Exception:  # a closed queue or a database hiccup: the next tick tries again
                    log.warning("public-session cleanup could not be scheduled", exc_info=True)


SCHEDULER = Scheduler()
