"""The worker side of the RQ backend: the app jobs run in, the RQ job function, heartbeats, dead work horses.

RQ runs :func:`execute` with our job id as its only argument (enqueued by its
path ``core.jobs.rq_backend.execute``, which re-exports it): it reads the job's
name and kwargs from Redis and the registry from the worker's preloaded app,
beats the job's heartbeat while it runs and records its ending (retried
through a short Redis outage). :func:`worker_classes` are RQ's workers
reporting a dead work horse (:func:`on_rq_failure`), beating their own
liveness for ``metrics`` and sparing RQ's bookkeeping the round trips a job as
the service enqueues it does not need (docs/performance.md, "Webhooks and jobs
on RQ").
"""

from __future__ import annotations

import json
import logging
import os
import pkgutil
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from core.jobs import JobCancelled, JobContext, JobState, run_to_end
from core.jobs.inprocess_store import to_json_value
from core.jobs.rq_redis import UNREACHABLE, redis_client, retry_outage
from core.jobs.rq_store import HEARTBEAT_INTERVAL, TERMINAL_STATES, RedisJobStore

if TYPE_CHECKING:
    from flask import Flask

    from core.records import Job

log = logging.getLogger(__name__)


class WorkerContext(JobContext):
    """The job's view of itself inside a worker."""

    cancel_poll_interval = 0.05  # seconds between looks at the cancel marker

    def __init__(self, store: RedisJobStore, app: Flask, job_id: str, owner: str, time_limit: float) -> None:
        self.job_id = job_id
        self.owner = owner
        self.app = app
        self._store = store
        self._deadline = time.monotonic() + time_limit if time_limit else None
        # the start script has just looked at the cancel marker: the first look is one interval later
        self._next_poll = time.monotonic() + self.cancel_poll_interval
        self._cancelled = False
        self.timed_out = False
        self.cancel_seen = False

    def emit(self, name: str, data: Any = None) -> str:
        event_id = retry_outage(f"job {self.job_id}", lambda: self._store.emit(self.job_id, name, data))
        if not event_id:  # ended from outside (forced cancel, watchdog)
            raise JobCancelled(self.job_id)
        return event_id

    def cancelled(self) -> bool:
        if self._deadline is not None and time.monotonic() > self._deadline:
            self.timed_out = True
        now = time.monotonic()
        if not self._cancelled and not self.timed_out and now >= self._next_poll:
            self._next_poll = now + self.cancel_poll_interval
            try:
                marked = self._store.r.exists(self._store.cancel_key(self.job_id))
            except UNREACHABLE:  # Redis away: nobody can have asked since; look again later
                self._next_poll = now + 1.0
                marked = False
            if marked:
                self._cancelled = True
                retry_outage(f"job {self.job_id}", lambda: self._store.incr("cancel_marker_hit"))
        if self._cancelled or self.timed_out:
            self.cancel_seen = True
            return True
        return False


# --- the worker side -----------------------------------------------------------------------
#: the factory a worker builds (and, for a new plugin set, rebuilds) its app with. Named, not
#: imported: the web app imports the job layer, so the job layer reaches the app only by this name
#: (resolved when a worker first needs it), which keeps the core's import graph free of circles
APP_FACTORY = "core.app:create_app"

_worker_app: Flask | None = None
_worker_kind = "fork"
_app_factory: Callable[..., Flask] | None = None


_worker_plugins_gen: int | None = None


def set_worker_app(app: Flask, kind: str = "fork", factory: Callable[..., Flask] | None = None) -> None:
    """Called by ``service worker`` before it forks: the app every job of this process runs in
    (and, optionally, the factory that rebuilds it; default :data:`APP_FACTORY`)."""
    global _worker_app, _worker_kind, _app_factory
    _worker_app = app
    _worker_kind = kind
    if factory is not None:
        _app_factory = factory


def build_worker_app() -> Flask:
    """A fresh app for this worker, from the registered factory (no migrations: the server runs them)."""
    global _app_factory
    if _app_factory is None:
        _app_factory = pkgutil.resolve_name(APP_FACTORY)
    return _app_factory(migrate=False)


def worker_app() -> Flask:
    global _worker_app
    if _worker_app is None:  # started by a plain ``rq worker``: build the app once
        import flask

        in_app = flask.has_app_context()
        _worker_app = flask.current_app._get_current_object() if in_app else build_worker_app()  # type: ignore[attr-defined]
    return _worker_app


def _generation_keys(app: Flask, client: Any) -> list[str] | None:
    """The Redis keys of both generations :func:`_caught_up` compares before every job, when the deployment's
    shared state is on ``client`` (the job store's): the start script reads them along. None otherwise."""
    from core.appstate import state
    from core.reload import APPS_GEN, COMPONENTS_GEN
    from core.shared import RedisState

    shared = state(app).shared
    if not isinstance(shared, RedisState) or shared.r is not client:
        return None
    return [shared.prefix + APPS_GEN, shared.prefix + COMPONENTS_GEN]


def _caught_up(app: Flask, generations: list[str | None] | None = None) -> Flask:
    """The worker's app in step with the deployment: a new plugin set rebuilds it, reloaded bundles swap in.

    Both generations are read in one round trip (``MGET``) before every job, or given (``generations``: read
    by the job's start script, :func:`_generation_keys`)."""
    global _worker_app, _worker_plugins_gen
    from core.appstate import state
    from core.reload import APPS_GEN, COMPONENTS_GEN, sync_components

    shared = state(app).shared
    components: int | None = None
    if shared is not None:
        apps_value, components_value = generations or shared.get_many([APPS_GEN, COMPONENTS_GEN])
        gen = int(apps_value) if apps_value else 0
        components = int(components_value) if components_value else 0
        if _worker_plugins_gen is None:  # the generation the app was built for, not the current one
            _worker_plugins_gen = state(app).plugins_generation
        if gen != _worker_plugins_gen:
            try:
                app = _worker_app = build_worker_app()
                _worker_plugins_gen = gen
            except Exception:  # keep running jobs on the current app
                log.exception("worker app not rebuilt for plugin generation %s", gen)
    sync_components(app, force=True, current=components)
    return app


_stores: dict[tuple[int, str], RedisJobStore] = {}


def _store(client: Any, queue_name: str) -> RedisJobStore:
    """The job store of ``queue_name`` on ``client``, built once per process (it registers four scripts)."""
    key = (id(client), queue_name)
    store = _stores.get(key)
    if store is None or store.r is not client:
        store = _stores[key] = RedisJobStore(client, queue_name)
    return store


def execute(job_id: str) -> None:
    """The RQ job function: run service job ``job_id`` (everything else is read from Redis)."""
    from rq import get_current_job

    from core.appstate import state as app_state

    rq_job = get_current_job()
    queue_name = rq_job.origin if rq_job is not None else "service"
    worker_name = (rq_job.worker_name if rq_job is not None else None) or f"pid-{os.getpid()}"
    app = worker_app()
    store = _store(redis_client(app_state(app).settings.redis_url or ""), queue_name)
    keys = _generation_keys(app, store.r)
    if keys is None:  # the shared state elsewhere: read before the start, as its own round trip
        app = _caught_up(app)
        run_job(store, app, app_state(app).job_registry, job_id, worker_name, _worker_kind)
        return
    run_job(store, app, None, job_id, worker_name, _worker_kind, generation_keys=keys)


def run_job(
    store: RedisJobStore,
    app: Flask,
    registry: Mapping[str, Job] | None,
    job_id: str,
    worker: str,
    kind: str,
    *,
    generation_keys: list[str] | None = None,
) -> None:
    """Start and run service job ``job_id``. With ``generation_keys`` (:func:`_generation_keys`) the start
    script reads the generations along and ``app`` is caught up (:func:`_caught_up`) before the job runs,
    ``registry`` (None) then the caught-up app's."""
    # the record and the start in one round trip (the start script also looks at the cancel marker)
    started, fields, generations = store.start_reading(job_id, worker, kind, generation_keys or ())
    if generation_keys is not None and started == "running":
        from core.appstate import state as app_state

        app = _caught_up(app, generations)
        registry = app_state(app).job_registry
    if not started:
        log.warning("job %s: no record (expired or deleted); skipping", job_id)
        return
    ttl = int(fields.get("ttl") or 3600)
    limit = float(fields.get("time_limit") or 0)
    if started == "cancel":
        store.end(job_id, JobState.CANCELLED, ttl=ttl)
        return
    if started != "running":
        log.info("job %s is %s; not running it", job_id, started)
        return
    job = registry.get(fields["name"]) if registry is not None else None
    if job is None:
        store.end(job_id, JobState.FAILED, ttl=ttl, error=f"job {fields['name']!r} is not registered on this worker")
        return
    _beats.add(store, job_id)

    ctx = WorkerContext(store, app, job_id, fields.get("owner", ""), limit)

    def call() -> Any:
        with app.app_context():
            try:
                return to_json_value(job.func(ctx, **json.loads(fields.get("kwargs") or "{}")), "job result")
            finally:
                factory = app.extensions.get("service.db")
                if factory is not None:
                    factory.remove()

    try:
        ending = run_to_end(
            call,
            limit=limit,
            timed_out=lambda: ctx.timed_out,
            cancel_seen=lambda: ctx.cancel_seen,
            on_error=lambda exc: log.exception("job %s (%s) failed", job_id, fields["name"]),
        )
        retry_outage(  # the outcome survives a short Redis outage
            f"job {job_id}",
            lambda: store.end(
                job_id, ending.state, ttl=ttl, result=ending.result, error=ending.error, event_data=ending.event_data
            ),
        )
    finally:
        _beats.discard(job_id)


class _Beats:
    """The heartbeats of the jobs this process runs, from one thread per process.

    Every running job's ``hb`` key is renewed each :data:`HEARTBEAT_INTERVAL` seconds (the start script
    set it first). One thread for the process's life instead of a thread started and stopped per job
    (most jobs end long before their first beat); a forked work horse starts its own on its first job.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, tuple[RedisJobStore, float]] = {}
        self._pid = 0

    def add(self, store: RedisJobStore, job_id: str) -> None:
        with self._lock:
            self._jobs[job_id] = (store, time.monotonic() + HEARTBEAT_INTERVAL)
            if self._pid != os.getpid():  # first job of this process (or of a forked child)
                self._pid = os.getpid()
                threading.Thread(target=self._run, daemon=True, name="job-heartbeats").start()

    def discard(self, job_id: str) -> None:
        with self._lock:
            self._jobs.pop(job_id, None)

    def _run(self) -> None:
        while True:
            with self._lock:
                now = time.monotonic()
                due = [(job_id, store) for job_id, (store, at) in self._jobs.items() if at <= now]
                for job_id, store in due:
                    self._jobs[job_id] = (store, now + HEARTBEAT_INTERVAL)
                nearest = min((at for _, at in self._jobs.values()), default=now + HEARTBEAT_INTERVAL)
            for job_id, store in due:
                try:
                    store.beat(job_id)
                except Exception:
                    log.warning("job %s: heartbeat failed", job_id, exc_info=True)
            time.sleep(max(0.05, min(1.0, nearest - time.monotonic())))


_beats = _Beats()


def on_rq_failure(rq_job: Any, reason: str) -> None:
    """Worker-side watchdog: RQ failed our job outside :func:`execute` (horse died, was stopped)."""
    try:
        app = worker_app()
        from core.appstate import state as app_state

        store = RedisJobStore(redis_client(app_state(app).settings.redis_url or ""), rq_job.origin)
        fields = store.r.hgetall(store.job_key(rq_job.id))
        if fields and fields.get("state") not in TERMINAL_STATES:
            store.end_lost(rq_job.id, fields, reason)
    except Exception:
        log.exception("job %s: could not record the failure", getattr(rq_job, "id", "?"))


#: the RQ job every service job is (:meth:`core.jobs.rq_backend.RQQueue.enqueue`)
EXECUTE_PATH = "core.jobs.rq_backend.execute"


def _plain_job(job: Any, default_result_ttl: int) -> bool:
    """A job as :class:`~core.jobs.rq_backend.RQQueue` enqueues it: :data:`EXECUTE_PATH`, result discarded
    (``result_ttl=0``), no repeats, group or rate limit. Nothing depends on such a job (the service's
    enqueue takes no ``depends_on``), so RQ's dependents bookkeeping has nothing to do for it."""
    return (
        job.func_name == EXECUTE_PATH
        and job.get_result_ttl(default_result_ttl) == 0
        and not job.repeats_left
        and not job.group_id
        and not job.has_rate_limit
    )


def worker_classes() -> tuple[type, type]:
    """RQ's forking and simple workers, each reporting dead work horses to :func:`on_rq_failure`."""
    from rq import SimpleWorker, Worker

    class _Mixin:
        def handle_job_failure(
            self, job: Any, queue: Any, started_job_registry: Any = None, exc_string: str = "", execution: Any = None
        ) -> None:
            super().handle_job_failure(  # type: ignore[misc]  # a mixin: Worker is the next class
                job,
                queue,
                started_job_registry=started_job_registry,
                exc_string=exc_string,
                execution=execution,
            )
            if exc_string:
                log.warning("job %s failed in RQ: %s", job.id, exc_string.strip().splitlines()[-1])
            on_rq_failure(job, "The worker running this job stopped unexpectedly")

        #: seconds between two of RQ's default worker heartbeats (its TTL is minutes: ``worker_ttl`` + 60)
        beat_every = 1.0
        _next_beat = 0.0

        def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
            """RQ beats before and after every dequeue, three commands each (a ``HSET`` and two ``EXPIRE``):
            its default beat goes at most once a second and in one round trip; a beat with a timeout of
            its own (a job's) or inside RQ's pipeline goes as RQ sends it."""
            if pipeline is not None or timeout is not None:
                super().heartbeat(timeout, pipeline=pipeline)  # type: ignore[misc]
                return
            now = time.monotonic()
            if now < self._next_beat:
                return
            with self.connection.pipeline(transaction=False) as pipe:  # type: ignore[attr-defined]
                super().heartbeat(None, pipeline=pipe)  # type: ignore[misc]
                pipe.execute()
            self._next_beat = now + self.beat_every

        #: seconds between two looks at ``rq suspend`` (RQ looks before every job, a transaction each time)
        suspension_check_every = 1.0
        _next_suspension_check = 0.0

        def check_for_suspension(self, burst: bool) -> None:
            """RQ's look at ``rq suspend`` (a ``MULTI`` with its default heartbeat), at most once a second:
            a suspension stops new jobs within a second instead of before the very next one."""
            now = time.monotonic()
            if now < self._next_suspension_check:
                return
            super().check_for_suspension(burst)  # type: ignore[misc]
            self._next_suspension_check = time.monotonic() + self.suspension_check_every

        def set_state(self, state: str, pipeline: Any = None) -> None:
            """RQ writes ``idle`` twice between two jobs (after the job, then as it starts listening): the
            second write of the same state, outside a pipeline, is skipped (one round trip a job)."""
            if pipeline is None and state == "idle" and getattr(self, "_state", None) == "idle":
                return
            super().set_state(state, pipeline=pipeline)  # type: ignore[misc]

        def handle_execution_ended(self, job: Any, queue: Any, heartbeat_ttl: int) -> None:
            """RQ beats the job once more as it ended (a round trip of its own), to keep it alive through its
            callbacks; a plain job of ours that succeeded has none and its hash is deleted right after."""
            if job.get_status(refresh=False) == "failed" or not _plain_job(job, self.default_result_ttl):  # type: ignore[attr-defined]
                super().handle_execution_ended(job, queue, heartbeat_ttl)  # type: ignore[misc]
                return
            from rq.utils import now

            job.ended_at = now()

        def handle_job_success(self, job: Any, queue: Any, started_job_registry: Any, execution: Any) -> None:
            """A plain job of ours (:func:`_plain_job`) ends in one ``MULTI`` without reads: RQ's own success
            path first watches and reads the job's dependents, then (``result_ttl=0``) reads its status and
            twice its executions to find what the same ``MULTI`` already deletes (nine round trips a job)."""
            if not _plain_job(job, self.default_result_ttl):  # type: ignore[attr-defined]
                super().handle_job_success(job, queue, started_job_registry, execution)  # type: ignore[misc]
                return
            from rq.results import Result

            with self.connection.pipeline() as pipe:  # type: ignore[attr-defined]
                self.increment_successful_job_count(pipeline=pipe)  # type: ignore[attr-defined]
                self.increment_total_working_time(job.ended_at - job.started_at, pipe)  # type: ignore[attr-defined]
                self.cleanup_execution(job, pipeline=pipe, execution=execution)  # type: ignore[attr-defined]
                pipe.delete(job.execution_registry.key)
                pipe.delete(job.key, job.dependents_key, job.dependencies_key, Result.get_key(job.id))
                pipe.execute()
            job._status = "finished"
            took = job.ended_at - job.started_at
            self.log.info("Successfully completed job %s in %ss on worker %s", job.id, took, self.name)  # type: ignore[attr-defined]

        def work(self, *args: Any, **kwargs: Any) -> bool:
            """RQ's loop, with a thread beating for each queue (metrics count live workers from these)."""
            from core.appstate import state as app_state

            stores = [
                RedisJobStore(redis_client(app_state(worker_app()).settings.redis_url or ""), name)
                for name in self.queue_names()  # type: ignore[attr-defined]
            ]
            stop = threading.Event()

            def beat() -> None:
                while True:
                    for store in stores:
                        try:
                            store.worker_beat(self.name)  # type: ignore[attr-defined]
                        except Exception:
                            log.warning("worker %s: heartbeat failed", self.name, exc_info=True)  # type: ignore[attr-defined]
                    if stop.wait(HEARTBEAT_INTERVAL):
                        return

            thread = threading.Thread(target=beat, daemon=True, name="worker-heartbeat")
            thread.start()
            try:
                return bool(super().work(*args, **kwargs))  # type: ignore[misc]
            finally:
                stop.set()
                for store in stores:
                    try:
                        store.worker_gone(self.name)  # type: ignore[attr-defined]
                    except Exception:
                        log.debug("worker %s: could not deregister", self.name, exc_info=True)  # type: ignore[attr-defined]

    class ServiceWorker(_Mixin, Worker):
        def perform_job(self, *args: Any, **kwargs: Any) -> bool:
            try:
                return bool(super().perform_job(*args, **kwargs))
            finally:
                if getattr(self, "_is_horse", False):  # RQ ends the horse with os._exit: no atexit runs
                    from core.jobs import work_horse_exiting

                    work_horse_exiting()

    class ServiceSimpleWorker(_Mixin, SimpleWorker):
        """Runs the job in its own process, so RQ's two transactions before a job (the execution's
        registration, then the job's start) go as one: the first is held and sent with the second."""

        _held: Any = None

        def prepare_execution(self, job: Any) -> Any:
            from rq.executions import Execution

            pipe = self.connection.pipeline()
            execution = Execution.create(job, self.get_heartbeat_ttl(job), pipeline=pipe, worker_name=self.name)
            self.executions[execution.id] = execution
            self.set_state("busy", pipeline=pipe)
            self._held = pipe
            return execution

        def prepare_job_execution(self, job: Any, remove_from_intermediate_queue: bool = False) -> None:
            pipe, self._held = self._held, None
            if pipe is None:  # not through prepare_execution above
                super().prepare_job_execution(job, remove_from_intermediate_queue)
                return
            from rq.utils import now

            with pipe:  # RQ's prepare_job_execution, in the held transaction
                ttl = self.get_heartbeat_ttl(job)
                self.heartbeat(ttl, pipeline=pipe)
                job.heartbeat(now(), ttl, pipeline=pipe)
                job.prepare_for_execution(self.name, pipeline=pipe)
                pipe.persist(job.key)
                if remove_from_intermediate_queue:
                    queue = self.queue_class(job.origin, connection=self.connection)
                    pipe.lrem(queue.intermediate_queue_key, 1, job.id)
                pipe.execute()
            self.procline(f"Processing {job.func_name} from {job.origin} since {time.time()}")

    return ServiceWorker, ServiceSimpleWorker


__all__ = [
    "APP_FACTORY",
    "build_worker_app",
    "execute",
    "on_rq_failure",
    "run_job",
    "set_worker_app",
    "worker_app",
    "worker_classes",
]
