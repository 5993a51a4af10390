"""The build watchdog: one thread per web process.

Every ``BuildConfig.watchdog_interval`` seconds it

* asks the job queue to reap (:meth:`core.jobs.JobQueue.reap`: the core's
  liveness check, which ends the jobs whose worker died with ``error`` "The
  worker running this job stopped unexpectedly"), so they end even when nobody
  is reading their events;
* cancels polling builds whose client has neither polled nor streamed for
  ``SERVICE_BUILD_POLLING_TIMEOUT_SECONDS``: it first appends an ``error``
  event saying so (the client's final event), then cancels the job. With
  several web processes each runs a watchdog; the activity set lives in Redis
  (or in shared files for in-process jobs) and a job is claimed by exactly one
  of them. In-process jobs are cancelled by the watchdog of the process that
  runs them (only it can append the event); the others only drop the marks of
  jobs that ended or vanished.

It starts lazily with the first build request of a process (gunicorn forks
workers after the app is built, and threads do not survive a fork).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from core.jobs import JobBackendUnavailable
from service_build.events import error_payload

log = logging.getLogger(__name__)


class Watchdog:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = -1
        self.thread: threading.Thread | None = None
        self.targets: dict[str, tuple[Any, Any, Any]] = {}  # store namespace -> (queue, store, config): newest wins
        self.stop = threading.Event()

    def ensure(self, queue: Any, store: Any, config: Any) -> None:
        with self.lock:
            self.targets[getattr(store, "ns", "memory")] = (queue, store, config)
            if self.pid == os.getpid() and self.thread is not None and self.thread.is_alive():
                return
            self.pid = os.getpid()
            self.stop = threading.Event()
            self.thread = threading.Thread(target=self._loop, args=(self.stop,), name="build-watchdog", daemon=True)
            self.thread.start()

    def _loop(self, stop: threading.Event) -> None:
        from core.jobs.rq_redis import UNREACHABLE  # the deployment's Redis (the shared store the polls use)

        away: set[str] = set()  # the targets whose Redis was unreachable at their last tick
        while True:
            with self.lock:
                targets = list(self.targets.items())
            interval = min((t[2].watchdog_interval for _key, t in targets), default=5.0)
            if stop.wait(interval):
                return
            for key, (queue, store, config) in targets:
                try:
                    self.tick(queue, store, config)
                except (JobBackendUnavailable, *UNREACHABLE):  # Redis away: again next tick, said once per outage
                    # (a line, let alone a traceback, per tick filled the logs; and in 3.11 formatting one
                    # parses source in this thread, racing any other thread's parse: core.engine.pyparse)
                    if key not in away:
                        away.add(key)
                        log.warning("build watchdog: the job queue or the shared store is unavailable; retrying")
                    continue
                except Exception:
                    log.warning("build watchdog tick failed", exc_info=True)
                if key in away:
                    away.discard(key)
                    log.info("build watchdog: the job queue and the shared store are available again")

    @staticmethod
    def tick(queue: Any, store: Any, config: Any) -> int:
        """One pass; returns how many abandoned builds it cancelled."""
        queue.reap()  # the core's liveness check: ends jobs whose worker died (rate-limited by the backend)
        timeout = float(config.polling_timeout_seconds)
        killed = 0
        for job_id in store.stale(time.time() - timeout):
            if not queue.emits_here(job_id):  # in-process: only the job's own process can emit to it
                info = queue.info(job_id)  # ends it when its process died
                if info is None or info.state.terminal:
                    store.unwatch(job_id)
                continue  # a live process runs it: its own watchdog cancels it
            if not store.claim(job_id):
                continue  # another web process took it
            info = queue.info(job_id)
            if info is None or info.state.terminal:
                continue
            text = f"Build abandoned: no poll for {timeout:g} s"
            meta = info.meta or {}
            queue.emit(
                job_id,
                "error",
                error_payload(text, flow_id=meta.get("run_flow_id"), session_id=meta.get("session_id"), abandoned=True),
            )
            queue.cancel(job_id)
            store.incr("polling_watchdog_kills")
            killed += 1
            log.info("build %s abandoned by its polling client; cancelled", job_id)
        return killed


WATCHDOG = Watchdog()
