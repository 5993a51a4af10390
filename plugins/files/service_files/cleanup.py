"""The ephemeral-file cleanup: uploads made with ``ephemeral=true`` older than the age setting go.

* job ``files.ephemeral_cleanup`` (owner ``system:files-cleanup``) deletes every ephemeral row created
  more than ``SERVICE_FILES_EPHEMERAL_MAX_AGE_SECONDS`` ago, then their bytes once the deletion is
  committed; it runs on the job backend (an RQ worker in scale-out, a thread of a web process on the
  embedded default);
* scheduled by :class:`core.jobs.periodic.PeriodicJob` (started by the first files request), every
  ``SERVICE_FILES_EPHEMERAL_CLEANUP_INTERVAL_SECONDS`` once for the deployment (mark ``files:ephemeral-cleanup``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa
from flask import Flask

from core import db
from core.appstate import plugin_settings
from core.db import utcnow
from core.jobs import JobContext
from core.jobs.periodic import PeriodicJob

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


SCHEDULER = PeriodicJob(
    job=CLEANUP_JOB, owner=CLEANUP_OWNER, mark=_MARK, interval=_interval, name="files-ephemeral-cleanup"
)
tick = SCHEDULER.tick  # enqueue the job if no process did during this interval (tests call it directly)
