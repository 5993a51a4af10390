"""The ephemeral-file cleanup: uploads made with ``ephemeral=true`` older than the age setting go.

* job ``files.ephemeral_cleanup`` (owner ``system:files-cleanup``) deletes every ephemeral row created
  more than ``SERVICE_FILES_EPHEMERAL_MAX_AGE_SECONDS`` ago, then their bytes once the deletion is
  committed; it runs on the job backend (an RQ worker in scale-out, a thread of a web process on the
  embedded default);
* scheduled like the flows plugin's public-session cleanup: a thread per web process, started lazily by
  the first files request (threads do not survive gunicorn's fork), wakes every
  ``min(SERVICE_FILES_EPHEMERAL_CLEANUP_INTERVAL_SECONDS, 60)`` seconds and enqueues the job when the
  deployment-wide mark of the shared state (``files:ephemeral-cleanup``, lifetime the interval) is free,
  so one job runs per interval whatever the number of processes.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
from typing import Any

import sqlalchemy as sa
from flask import Flask

from core import db
from core.app import plugin_settings, state
from core.db import utcnow
from core.jobs import JobContext

log = logging.getLogger(__name__)

CLEANUP_JOB = "files.ephemeral_cleanup"
CLEANUP_OWNER = "system:files-cleanup"
_MARK = "files:ephemeral-cleanup"
BATCH = 500


def expire(app: Flask, max_age_seconds: float) -> int:
    """Delete ephemeral files older than ``max_age_seconds`` (rows first, bytes after the commit)."""
    from service_files.config import runtime
    from service_files.models import StoredFile
    from service_files.services import remove_bytes

    storage = runtime(app).storage
    cutoff = utcnow() - dt.timedelta(seconds=max_age_seconds)
    removed = 0
    while True:
        with db.transaction() as s:
            rows = list(
                s.execute(
                    sa.select(StoredFile.id, StoredFile.storage_key)
                    .where(StoredFile.ephemeral.is_(True), StoredFile.created_at < cutoff)
                    .limit(BATCH)
                )
            )
            if not rows:
                return removed
            s.execute(sa.delete(StoredFile).where(StoredFile.id.in_([r[0] for r in rows])))
        remove_bytes(storage, [r[1] for r in rows])
        removed += len(rows)


def cleanup_job(ctx: JobContext) -> dict[str, Any]:
    from service_files.config import FilesConfig

    config: FilesConfig = plugin_settings("files", ctx.app)
    return {"removed": expire(ctx.app, float(config.ephemeral_max_age_seconds))}


def _interval(app: Flask) -> float:
    return float(plugin_settings("files", app).ephemeral_cleanup_interval_seconds)


def tick(app: Flask) -> str | None:
    """Enqueue the cleanup job if no process did during this interval; its id, or None."""
    st = state(app)
    interval = _interval(app)
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
            if self.pid == os.getpid() or _interval(app) <= 0:
                return
            self.pid = os.getpid()
            threading.Thread(target=self._loop, name="files-ephemeral-cleanup", daemon=True).start()

    def _loop(self) -> None:
        stop = threading.Event()
        while True:
            with self.lock:
                apps = list(self.apps.values())
            interval = min((_interval(a) for a in apps), default=60.0)
            if stop.wait(max(1.0, min(interval, 60.0))):
                return
            for app in apps:
                try:
                    with app.app_context():
                        tick(app)
                except Exception:  # a closed queue or a database hiccup: the next tick tries again
                    log.warning("ephemeral-file cleanup could not be scheduled", exc_info=True)


SCHEDULER = Scheduler()
