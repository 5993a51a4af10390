"""Background jobs and their event streams: one interface, two backends.

* ``inprocess`` (default): jobs run in threads of the web process (greenlets
  under gunicorn's gevent workers); events live in memory.
* ``rq``: jobs run on ``service worker`` processes through RQ on Redis
  (``SERVICE_REDIS_URL``); events go to a Redis Stream per job, so any web
  process can read, poll or cancel any job.

Jobs are registered by name through the ``register_jobs`` hook and enqueued
with JSON keyword arguments (ids, never ORM or request objects). Every job has
an owner, recorded at enqueue time; :meth:`JobQueue.info_for` is the
owner-scoped lookup that endpoints must use.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask

    from core.records import Job
    from core.settings import Settings


class JobState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (JobState.FINISHED, JobState.FAILED, JobState.CANCELLED)


#: The event a backend appends as the very last entry of every ended job's stream
#: (``error`` carries ``{"error": message}``), so a blocked reader wakes and stops.
END_EVENTS: dict[JobState, str] = {
    JobState.FINISHED: "finished",
    JobState.FAILED: "error",
    JobState.CANCELLED: "cancelled",
}


class JobCancelled(Exception):
    """Raised by :meth:`JobContext.check_cancelled` to stop a job cooperatively."""


class UnknownJob(LookupError):
    """No job of that name is registered."""


@dataclass
class JobInfo:
    id: str
    name: str
    owner: str
    state: JobState
    created_at: float
    started_at: float | None = None
    ended_at: float | None = None
    result: Any = None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    """One entry of a job's event stream; ``id`` orders entries and is the read cursor."""

    id: str
    name: str
    data: Any


class JobContext(abc.ABC):
    """Handed to a running job function as its first argument."""

    job_id: str
    owner: str
    app: Flask  # an app context is pushed while the job runs

    @abc.abstractmethod
    def emit(self, name: str, data: Any = None) -> str:
        """Append an event to this job's stream; returns its id."""

    @abc.abstractmethod
    def cancelled(self) -> bool:
        """True once someone asked to cancel this job."""

    def check_cancelled(self) -> None:
        if self.cancelled():
            raise JobCancelled(self.job_id)


class JobQueue(abc.ABC):
    """The backend-neutral interface every feature uses."""

    backend: str

    @abc.abstractmethod
    def enqueue(
        self,
        name: str,
        *,
        owner: str,
        kwargs: Mapping[str, Any] | None = None,
        job_id: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        """Start job ``name`` for ``owner``; returns the job id. Raises :class:`UnknownJob`."""

    @abc.abstractmethod
    def info(self, job_id: str) -> JobInfo | None:
        """The job, whoever owns it (internal use only)."""

    def info_for(self, job_id: str, owner: str) -> JobInfo | None:
        """The job if ``owner`` owns it, else None: what endpoints must call."""
        job = self.info(job_id)
        return job if job is not None and job.owner == owner else None

    @abc.abstractmethod
    def cancel(self, job_id: str) -> bool:
        """Ask the job to stop; True if it was still queued or running."""

    @abc.abstractmethod
    def emit(self, job_id: str, name: str, data: Any = None) -> str:
        """Append an event to a job's stream (used by the job context)."""

    @abc.abstractmethod
    def read_events(
        self, job_id: str, after: str | None = None, *, block_seconds: float = 0.0, limit: int = 1000
    ) -> list[Event]:
        """Events after cursor ``after`` (None: from the start), waiting up to ``block_seconds`` for one."""

    @abc.abstractmethod
    def active_jobs(self) -> int:
        """Jobs queued or running."""

    def metrics(self) -> dict[str, Any]:
        return {"backend": self.backend, "active_jobs": self.active_jobs()}

    def close(self) -> None:  # noqa: B027 - optional hook for backends holding resources
        """Release resources (threads, connections)."""


def make_queue(app: Flask, settings: Settings, registry: dict[str, Job]) -> JobQueue:
    """The queue for ``settings.job_backend``."""
    if settings.job_backend == "rq":
        from core.jobs.rq_backend import RQQueue

        return RQQueue(app, settings, registry)
    from core.jobs.inprocess import InProcessQueue

    return InProcessQueue(app, settings, registry)


__all__ = [
    "END_EVENTS",
    "Event",
    "JobCancelled",
    "JobContext",
    "JobInfo",
    "JobQueue",
    "JobState",
    "UnknownJob",
    "make_queue",
]
