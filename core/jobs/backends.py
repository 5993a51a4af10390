"""The job queue of a deployment: the in-process backend, or RQ on Redis (``SERVICE_JOB_BACKEND``).

Apart from :mod:`core.jobs` (the interface every backend implements and imports), so that the
interface does not import its implementations back.
"""

from __future__ import annotations

from flask import Flask

from core.jobs import JobQueue
from core.jobs.inprocess import InProcessQueue
from core.records import Job
from core.settings import Settings

__all__ = ["make_queue"]


def make_queue(app: Flask, settings: Settings, registry: dict[str, Job]) -> JobQueue:
    """The queue for ``settings.job_backend``."""
    if settings.job_backend == "rq":
        from core.jobs.rq_backend import RQQueue  # rq and redis are imported only for the RQ backend

        return RQQueue(app, settings, registry)
    return InProcessQueue(app, settings, registry)
