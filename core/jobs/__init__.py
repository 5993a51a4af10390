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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.errors import ApiError

if TYPE_CHECKING:
    from flask import Flask


class JobState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"
    #: the job's run paused for outside input; its checkpoint is in the database (core.runs.checkpoints)
    SUSPENDED = "suspended"

    @property
    def terminal(self) -> bool:
        return self in (JobState.FINISHED, JobState.FAILED, JobState.CANCELLED, JobState.SUSPENDED)


#: The event a backend appends as the very last entry of every ended job's stream
#: (``error`` carries ``{"error": message}``, ``suspended`` the run's ``suspended``
#: event data), so a blocked reader wakes and stops.
END_EVENTS: dict[JobState, str] = {
    JobState.FINISHED: "finished",
    JobState.FAILED: "error",
    JobState.CANCELLED: "cancelled",
    JobState.SUSPENDED: "suspended",
}


class JobCancelled(Exception):
    """Raised by :meth:`JobContext.check_cancelled` to stop a job cooperatively."""


class JobSuspended(Exception):
    """Raised by a job function whose run paused: the job ends ``suspended``.

    ``data`` (JSON) becomes the data of the job's ``suspended`` end event;
    ``result`` its recorded result.
    """

    def __init__(self, data: dict[str, Any], result: Any = None) -> None:
        super().__init__("suspended")
        self.data = data
        self.result = result


class UnknownJob(LookupError):
    """No job of that name is registered."""


class QueueClosed(RuntimeError):
    """The queue was closed (its app is finished: shut down, or replaced in a test): nothing is enqueued."""


#: seconds a client is told to wait (``Retry-After``) when the job backend is unreachable
RETRY_AFTER_SECONDS = 5


class JobBackendUnavailable(ApiError):
    """The job backend's store (Redis) cannot be reached: a 503 with ``Retry-After``, never a 500.

    Jobs already running carry on (workers retry their writes for a while) and
    their events are readable again once the store is back.
    """

    def __init__(self, detail: str = "The job queue is unavailable; retry shortly") -> None:
        super().__init__(503, detail, {"Retry-After": str(RETRY_AFTER_SECONDS)})


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
    #: someone asked to cancel the job (it may still be running until it notices, or have ended)
    cancel_requested: bool = False


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


@dataclass(frozen=True)
class Ending:
    """How a job ended: its terminal state, result, error and the data of its end event."""

    state: JobState
    result: Any = None
    error: str | None = None

    @property
    def event_data(self) -> Any:
        if self.state is JobState.FAILED:
            return {"error": self.error}
        if self.state is JobState.SUSPENDED:
            return self.result
        return None


def error_message(exc: BaseException) -> str:
    """What a failed job reports: the exception's message, never its traceback."""
    return str(exc) or type(exc).__name__


def time_limit_message(limit: float) -> str:
    return f"Job exceeded its time limit of {limit:g} s"


def run_to_end(
    call: Any,
    *,
    limit: float,
    timed_out: Any,
    cancel_seen: Any,
    cancel_requested: Any = lambda: True,
    on_error: Any = None,
) -> Ending:
    """Run a job function and decide its ending: the one rule both backends apply.

    ``call()`` runs the job (returning its JSON result); ``timed_out()``,
    ``cancel_seen()`` and ``cancel_requested()`` read the job context after it.
    A job that saw a cancellation it was asked for ends ``cancelled`` (or
    ``failed`` when its time limit was the reason); :class:`JobSuspended`
    ends it ``suspended``; any other exception ``failed`` with its message
    (``on_error(exc)`` is called first, for logging).
    """
    try:
        result = call()
    except JobCancelled:
        if timed_out():
            return Ending(JobState.FAILED, error=time_limit_message(limit))
        return Ending(JobState.CANCELLED)
    except JobSuspended as paused:
        return Ending(JobState.SUSPENDED, result=paused.data)
    except Exception as exc:
        if on_error is not None:
            on_error(exc)
        if timed_out() or type(exc).__name__ == "JobTimeoutException":  # RQ's hard limit
            return Ending(JobState.FAILED, error=time_limit_message(limit))
        return Ending(JobState.FAILED, error=error_message(exc))
    if timed_out() and cancel_seen():
        return Ending(JobState.FAILED, error=time_limit_message(limit))
    if cancel_requested() and cancel_seen():
        return Ending(JobState.CANCELLED)
    return Ending(JobState.FINISHED, result=result)


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

    # --- liveness ---------------------------------------------------------------------------
    @abc.abstractmethod
    def reap(self) -> int:
        """End the jobs whose worker is gone, with a final ``error`` event; returns how many ended now.

        A job is reaped when the process running it died (in-process backend: the owning web
        process; RQ: the work horse, seen by its heartbeat and RQ's status), when it was lost
        from the queue before it started, or when it ignored its time limit past the grace.
        Readers (``info``, ``read_events``) do this for the job they read; a watchdog calls
        ``reap`` to end the jobs nobody reads. Backends may rate-limit it (then it returns 0).
        """

    def emits_here(self, job_id: str) -> bool:
        """True when this process may append events to ``job_id`` (:meth:`emit` from outside the job).

        In-process jobs: only the process running the job; RQ: any process.
        """
        return True

    def metrics(self) -> dict[str, Any]:
        return {"backend": self.backend, "active_jobs": self.active_jobs()}

    def close(self) -> None:  # noqa: B027 - optional hook for backends holding resources
        """Release resources (threads, connections)."""

    @property
    def closed(self) -> bool:
        """Whether this queue was closed (its app is finished): a thread following the app (a ticker) stops
        rather than claim work it could not enqueue. A backend that refuses jobs once closed sets ``_closed``."""
        return bool(getattr(self, "_closed", False))


#: what must be done before a forked work horse ends (RQ ends it with ``os._exit``, which skips ``atexit``)
_horse_exits: list[Callable[[], object]] = []


def at_work_horse_exit(fn: Callable[[], object]) -> None:
    """Call ``fn`` (once registered, whatever the number of calls) in a forked job process after its job, before
    the process ends: export what a background thread still holds (spans). A failing ``fn`` is logged."""
    if fn not in _horse_exits:
        _horse_exits.append(fn)


def at_exit(fn: Callable[[], object]) -> None:
    """Call ``fn`` when this process ends, normally (``atexit``) or as a forked RQ job process after its job:
    what a writer thread still queues (vertex builds, traces, audit entries, key usage) is written either way."""
    import atexit

    atexit.register(fn)
    at_work_horse_exit(fn)


def work_horse_exiting() -> None:
    """The job process is about to end (the forking RQ worker calls this after each job)."""
    import logging

    for fn in list(_horse_exits):
        try:
            fn()
        except Exception:
            logging.getLogger(__name__).warning("a work horse exit handler failed", exc_info=True)


__all__ = [
    "END_EVENTS",
    "Ending",
    "Event",
    "JobBackendUnavailable",
    "JobCancelled",
    "JobContext",
    "JobInfo",
    "JobQueue",
    "JobState",
    "JobSuspended",
    "QueueClosed",
    "UnknownJob",
    "at_exit",
    "at_work_horse_exit",
    "error_message",
    "run_to_end",
    "time_limit_message",
    "work_horse_exiting",
]
